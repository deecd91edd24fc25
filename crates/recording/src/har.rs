//! HAR 1.2 import: one HAR file becomes the (unscrubbed) exchanges of one recording session.
//!
//! Parsing is strict about what an exchange needs (method, absolute URL, status, timestamps,
//! decodable bodies, a recording no larger than [`MAX_EXCHANGE_BYTES`]) and lenient about everything else HAR producers disagree on. Every error
//! names the file and the JSON path (`log.entries[3].request.url`), and a whole file is
//! validated before the caller writes anything.
//!
//! Bodies: `postData._encoding: "base64"` (a non-standard marker some converters use for
//! binary request bodies; `postData.encoding` too) and `content.encoding: "base64"` are decoded. HAR stores response
//! bodies already decoded, so a `content-encoding` response header is dropped to keep the
//! recorded headers true to the recorded body; a base64 body that still decodes by that header
//! (a producer that kept the bytes as they came) is recorded decoded, with a warning, so the
//! scrubber and synth see its content. A request body is stored as the client sent it,
//! so one with a `content-encoding` header is decoded as the recorder decodes one
//! ([`crate::encoding`]); one that does not decode is kept with its header and a warning.

use std::path::{Path, PathBuf};

use base64::Engine;
use serde::Deserialize;

use crate::encoding::{DEFAULT_MAX_DECODED_BYTES, Decoding, decode_message_body};
use crate::exchange::{
    Content, Correlation, Exchange, Frame, Headers, RecordedRequest, RecordedResponse, Safety,
    Timing,
};
use crate::wrec::MAX_EXCHANGE_BYTES;

/// A malformed HAR file.
#[derive(Debug, thiserror::Error)]
#[error("malformed HAR {file} at {json_path}: {message}")]
pub struct HarError {
    pub file: PathBuf,
    /// Where in the document, e.g. `log.entries[3].request.url`.
    pub json_path: String,
    pub message: String,
}

/// The twin's upstream root, split for relating recorded URLs to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BaseUrl {
    /// `http` or `https`.
    pub scheme: String,
    /// Lowercase host with the port only when it is not the scheme's default.
    pub authority: String,
    /// Path prefix without trailing `/` (`""` for a root base URL).
    pub path_prefix: String,
}

impl BaseUrl {
    /// Parse `http(s)://host[:port][/prefix]`.
    pub fn parse(url: &str) -> Result<BaseUrl, String> {
        let u = SplitUrl::parse(url).ok_or_else(|| {
            format!("`{url}` is not an absolute http(s) URL like `https://api.example.com/v1`")
        })?;
        Ok(BaseUrl {
            scheme: u.scheme,
            authority: u.authority,
            path_prefix: u.path.trim_end_matches('/').to_string(),
        })
    }

    /// `scheme://authority`.
    pub fn origin(&self) -> String {
        format!("{}://{}", self.scheme, self.authority)
    }

    /// Whether a path on the base URL's origin lies under its path prefix: `/v4/regions` and
    /// `/v4` under `/v4`, not `/v40/x` nor `/oauth/token` (the rule `wraith record` uses to
    /// tell the API's requests from others to its host).
    pub fn covers_path(&self, path: &str) -> bool {
        self.path_prefix.is_empty()
            || path == self.path_prefix
            || path
                .strip_prefix(&self.path_prefix)
                .is_some_and(|rest| rest.starts_with('/'))
    }
}

/// An absolute URL split into the parts an exchange records.
#[derive(Debug, Clone, PartialEq, Eq)]
struct SplitUrl {
    scheme: String,
    authority: String,
    path: String,
    query: String,
}

impl SplitUrl {
    fn parse(url: &str) -> Option<SplitUrl> {
        let (scheme, rest) = url.split_once("://")?;
        let scheme = scheme.to_ascii_lowercase();
        if scheme != "http" && scheme != "https" {
            return None;
        }
        let rest = rest.split('#').next().unwrap_or("");
        let auth_end = rest.find(['/', '?']).unwrap_or(rest.len());
        let (authority, tail) = rest.split_at(auth_end);
        // Drop userinfo: credentials in a URL are not part of where the request went.
        let authority = authority
            .rsplit('@')
            .next()
            .unwrap_or("")
            .to_ascii_lowercase();
        if authority.is_empty() || authority.contains(char::is_whitespace) || !port_ok(&authority) {
            return None;
        }
        let default_port = if scheme == "https" { ":443" } else { ":80" };
        let authority = authority
            .strip_suffix(default_port)
            .map(str::to_string)
            .unwrap_or(authority);
        let (path, query) = match tail.split_once('?') {
            Some((p, q)) => (p, q),
            None => (tail, ""),
        };
        let path = if path.is_empty() { "/" } else { path };
        Some(SplitUrl {
            scheme,
            authority,
            path: encode_unsendable(path),
            query: encode_unsendable(query),
        })
    }
}

/// The ASCII characters (beside the control characters, which import refuses) that an HTTP
/// request target cannot carry raw: the `http` crate's URI parser refuses a space, `<`, `>`
/// and `` ` `` in a path and a space, `"`, `<` and `>` in a query; `"` and `\` are not URL
/// characters either (RFC 3986), and a client percent-encodes all of them.
const UNSENDABLE: &[u8] = b" \"<>\\`";

/// `part` (a URL's path or query) with each [`UNSENDABLE`] character percent-encoded
/// (`red shoes` → `red%20shoes`), as a client puts it on the wire; every other byte as it is.
fn encode_unsendable(part: &str) -> String {
    let mut out = String::with_capacity(part.len());
    for c in part.chars() {
        match u8::try_from(c) {
            Ok(b) if UNSENDABLE.contains(&b) => out.push_str(&format!("%{b:02X}")),
            _ => out.push(c),
        }
    }
    out
}

/// Whether an authority's port, if it has one, is a number from 1 to 65535 (an empty one, `host:`,
/// is the scheme's default, as URLs allow). `[…]` holds an IPv6 host, colons and all.
fn port_ok(authority: &str) -> bool {
    let host_end = if authority.starts_with('[') {
        match authority.find(']') {
            Some(i) => i + 1,
            None => return false,
        }
    } else {
        authority.rfind(':').unwrap_or(authority.len())
    };
    match authority[host_end..].strip_prefix(':') {
        None => host_end == authority.len(),
        Some("") => true,
        Some(p) => p.bytes().all(|b| b.is_ascii_digit()) && p.parse::<u16>().is_ok_and(|n| n > 0),
    }
}

/// A `null` where HAR producers disagree whether to write the field at all (`mimeType`, a
/// header's `value`, `headers`): read as absent, the field's empty value.
fn null_as_default<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Default + Deserialize<'de>,
{
    Ok(Option::<T>::deserialize(d)?.unwrap_or_default())
}

#[derive(Deserialize)]
struct Har {
    log: Log,
}

#[derive(Deserialize)]
struct Log {
    entries: Vec<Entry>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Entry {
    started_date_time: String,
    #[serde(default)]
    time: Option<f64>,
    request: Request,
    response: Response,
    #[serde(default)]
    timings: Option<Timings>,
}

#[derive(Deserialize, Default)]
struct Timings {
    #[serde(default)]
    receive: Option<f64>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Request {
    method: String,
    url: String,
    #[serde(default, deserialize_with = "null_as_default")]
    headers: Vec<NameValue>,
    #[serde(default)]
    post_data: Option<PostData>,
}

#[derive(Deserialize)]
struct NameValue {
    name: String,
    #[serde(default, deserialize_with = "null_as_default")]
    value: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct PostData {
    #[serde(default, deserialize_with = "null_as_default")]
    mime_type: String,
    #[serde(default)]
    text: Option<String>,
    #[serde(default, deserialize_with = "null_as_default")]
    params: Vec<Param>,
    /// `_encoding` (some converters' marker), or `encoding` as `content` spells it.
    #[serde(default, rename = "_encoding", alias = "encoding")]
    encoding: Option<String>,
}

/// One of `postData.params`: a form field, or a file when it has a `fileName`.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Param {
    name: String,
    #[serde(default, deserialize_with = "null_as_default")]
    value: String,
    #[serde(default)]
    file_name: Option<String>,
    #[serde(default)]
    content_type: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Response {
    status: u16,
    #[serde(default, deserialize_with = "null_as_default")]
    headers: Vec<NameValue>,
    #[serde(default)]
    content: Option<HarContent>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct HarContent {
    #[serde(default, deserialize_with = "null_as_default")]
    mime_type: String,
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    encoding: Option<String>,
}

/// The exchanges of one HAR file, in entry order (unscrubbed: hand them to the scrubber).
#[derive(Debug, Clone)]
pub struct HarSession {
    /// File stem, used as the session's tag.
    pub stem: String,
    pub exchanges: Vec<Exchange>,
    /// Entries left out, each with its JSON path and why (e.g. status 0: never answered).
    pub skipped: Vec<String>,
    /// Entries left out for being on the base URL's origin but outside its path prefix (not
    /// the twin's API), each as `log.entries[i]: METHOD scheme://host/path` (the query, which
    /// may hold a secret, left out).
    pub outside_base_path: Vec<String>,
    /// What was imported other than as written, or with something the user should know, each
    /// naming where: a lone surrogate escape replaced by U+FFFD, a request body whose content
    /// coding does not decode. The file name is not part of the text.
    pub warnings: Vec<String>,
}

/// A `\uXXXX` escape of a UTF-16 surrogate that is not half of a pair: a browser that wrote
/// binary or cut text as a JavaScript string. JSON text cannot carry it as a character, so
/// serde refuses the whole document.
///
/// Returns the document with each such escape replaced by `\uFFFD` (the same six bytes, so
/// every other byte, and every line and column an error names, stays where it was) and the
/// byte offsets of the escapes replaced. Only escapes inside strings are read; a document that
/// is not JSON is left for the parser to refuse.
fn replace_lone_surrogates(bytes: &[u8]) -> (std::borrow::Cow<'_, [u8]>, Vec<usize>) {
    let hex_at = |i: usize| -> Option<u16> {
        let h = bytes.get(i..i + 4)?;
        if !h.iter().all(u8::is_ascii_hexdigit) {
            return None;
        }
        u16::from_str_radix(std::str::from_utf8(h).ok()?, 16).ok()
    };
    let escape_at = |i: usize| -> Option<u16> {
        if bytes.get(i..i + 2) == Some(b"\\u") {
            hex_at(i + 2)
        } else {
            None
        }
    };
    let is_high = |u: u16| (0xD800..=0xDBFF).contains(&u);
    let is_low = |u: u16| (0xDC00..=0xDFFF).contains(&u);
    let mut lone = Vec::new();
    let mut in_string = false;
    let mut i = 0;
    while i < bytes.len() {
        match (in_string, bytes[i]) {
            (false, b'"') => in_string = true,
            (false, _) => {}
            (true, b'"') => in_string = false,
            (true, b'\\') => {
                match escape_at(i) {
                    Some(u) if is_high(u) && escape_at(i + 6).is_some_and(is_low) => i += 6,
                    Some(u) if is_high(u) || is_low(u) => lone.push(i),
                    _ => {}
                }
                // The escaped character (or the `u` of a `\uXXXX`, whose digits hold no quote
                // or backslash) is never a string's end.
                i += 1;
            }
            (true, _) => {}
        }
        i += 1;
    }
    if lone.is_empty() {
        return (std::borrow::Cow::Borrowed(bytes), lone);
    }
    let mut fixed = bytes.to_vec();
    for &at in &lone {
        fixed[at..at + 6].copy_from_slice(b"\\uFFFD");
    }
    (std::borrow::Cow::Owned(fixed), lone)
}

/// A warning naming where each lone surrogate escape (byte offsets into `text`, the document
/// as parsed, and into `written`, the file's bytes) was: the entry holding it, or the document
/// outside the entries, with the line and column of the first.
fn lone_surrogate_warning(written: &[u8], text: &str, offsets: &[usize]) -> Option<String> {
    let first = *offsets.first()?;
    #[derive(Deserialize)]
    struct RawHar<'a> {
        #[serde(borrow)]
        log: RawLog<'a>,
    }
    #[derive(Deserialize)]
    struct RawLog<'a> {
        #[serde(borrow)]
        entries: Vec<&'a serde_json::value::RawValue>,
    }
    // Each entry's byte span in `text`: the raw values borrow from it.
    let spans: Vec<(usize, usize)> = serde_json::from_str::<RawHar<'_>>(text)
        .map(|h| {
            h.log
                .entries
                .iter()
                .map(|e| {
                    let start = (e.get().as_ptr() as usize).saturating_sub(text.as_ptr() as usize);
                    (start, start + e.get().len())
                })
                .collect()
        })
        .unwrap_or_default();
    let mut places: Vec<String> = Vec::new();
    for &at in offsets {
        let place = spans
            .iter()
            .position(|&(s, e)| (s..e).contains(&at))
            .map_or_else(
                || "the document outside log.entries".to_string(),
                |i| format!("log.entries[{i}]"),
            );
        if !places.contains(&place) {
            places.push(place);
        }
    }
    let shown = places.len().min(5);
    let more = match places.len() - shown {
        0 => String::new(),
        n => format!(" and {n} more"),
    };
    let before = &text.as_bytes()[..first];
    let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
    let column = first
        - before
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |p| p + 1)
        + 1;
    let escape = written
        .get(first..first + 6)
        .and_then(|e| std::str::from_utf8(e).ok())
        .unwrap_or("\\u????");
    Some(format!(
        "{} lone UTF-16 surrogate escape(s) ({escape} at line {line}, column {column}) in {}{more}: \
         half of a surrogate pair, which is no character (a browser writes one for binary or \
         cut text); imported with U+FFFD in its place, every other byte as written",
        offsets.len(),
        places[..shown].join(", ")
    ))
}

/// Whether a request path has a dot segment (`.`, `..`, or either percent-encoded), as the
/// engine's path normalization judges it: `wraith serve` refuses such a path (400), so neither
/// import nor `wraith record` keeps an exchange of one.
pub fn has_dot_segment(path: &str) -> bool {
    path.split('/').any(|seg| {
        [".", "..", "%2e", "%2e%2e", ".%2e", "%2e."]
            .iter()
            .any(|d| seg.eq_ignore_ascii_case(d))
    })
}

/// The longest `time` (and `timings.receive`) a HAR entry may give, in milliseconds: a day.
/// No recorded exchange takes longer; a larger value (`1e300`) is a broken exporter's, and
/// stored it would make `serve --latency-mode recorded` wait for it.
pub const MAX_HAR_TIME_MS: f64 = 86_400_000.0;

/// Parse and validate a whole HAR document. Nothing is written. An entry whose recording would
/// be larger than [`MAX_EXCHANGE_BYTES`] of CBOR is an error naming it.
pub fn parse_har(bytes: &[u8], file: &Path, base: &BaseUrl) -> Result<HarSession, HarError> {
    parse_har_limited(bytes, file, base, MAX_EXCHANGE_BYTES)
}

/// [`parse_har`] with `max_exchange_bytes` for the most CBOR one entry's recording may be.
fn parse_har_limited(
    bytes: &[u8],
    file: &Path,
    base: &BaseUrl,
    max_exchange_bytes: u64,
) -> Result<HarSession, HarError> {
    let err = |json_path: String, message: String| HarError {
        file: file.to_path_buf(),
        json_path,
        message,
    };
    // Some tools save HAR files with a UTF-8 byte order mark, which JSON does not allow.
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    if let Err(e) = std::str::from_utf8(bytes) {
        return Err(err(
            "(document)".to_string(),
            format!(
                "not UTF-8 text (invalid byte at offset {}); a HAR file is JSON in UTF-8: \
                 export it again or convert its encoding",
                e.valid_up_to()
            ),
        ));
    }
    // serde would read the document's structs from arrays by position, and then blame a path
    // like `[0][0][0]`: a document that is not an object is named as such first.
    if let Some(c) = bytes.iter().copied().find(|c| !c.is_ascii_whitespace())
        && c != b'{'
    {
        return Err(err(
            "(document)".to_string(),
            format!(
                "a HAR file is a JSON object with a `log` key ({{\"log\": {{\"entries\": \
                 [...]}}}}); this document starts with `{}`",
                char::from(c).escape_default()
            ),
        ));
    }
    let written = bytes;
    let (bytes, lone_surrogates) = replace_lone_surrogates(bytes);
    let bytes = &*bytes;
    let de = &mut serde_json::Deserializer::from_slice(bytes);
    let har: Har = serde_path_to_error::deserialize(&mut *de).map_err(|e| {
        let path = e.path().to_string();
        let path = if path == "." {
            "(document)".to_string()
        } else {
            path
        };
        err(path, e.inner().to_string())
    })?;
    // A second document after the first (two HAR files concatenated) would otherwise be
    // dropped without a word.
    de.end().map_err(|e| {
        err(
            "(document)".to_string(),
            format!(
                "{e} after the HAR document: the file holds more than one JSON document; \
                 give each HAR its own file"
            ),
        )
    })?;
    let stem = file
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut warnings: Vec<String> = std::str::from_utf8(bytes)
        .ok()
        .and_then(|text| lone_surrogate_warning(written, text, &lone_surrogates))
        .into_iter()
        .collect();
    let mut exchanges = Vec::with_capacity(har.log.entries.len());
    let mut skipped = Vec::new();
    let mut outside_base_path = Vec::new();
    // Entries recording a body on an answer that carries none on the wire (`log.entries[i]`
    // and why), named together in one warning after the loop.
    let mut undeliverable_bodies: Vec<String> = Vec::new();
    for (i, entry) in har.log.entries.into_iter().enumerate() {
        let at = |field: &str| format!("log.entries[{i}].{field}");
        if entry.response.status == 0 {
            skipped.push(format!(
                "{}: status 0 (no response was received)",
                at("response.status")
            ));
            continue;
        }
        if !(100..=999).contains(&entry.response.status) {
            return Err(err(
                at("response.status"),
                format!(
                    "{} is not an HTTP status (100 to 999; 0 means never answered)",
                    entry.response.status
                ),
            ));
        }
        // An interim answer (a WebSocket's `101 Switching Protocols`, a `103 Early Hints`) is
        // no answer a twin can give a request: serving one as final is an error.
        if entry.response.status < 200 {
            skipped.push(format!(
                "{}: status {} is an interim answer (a protocol switch such as a WebSocket \
                 upgrade, or early hints), which a twin does not replay",
                at("response.status"),
                entry.response.status
            ));
            continue;
        }
        let start_us =
            parse_time_us(&entry.started_date_time).map_err(|m| err(at("startedDateTime"), m))?;
        let method = entry.request.method.trim().to_ascii_uppercase();
        if method.is_empty() || !method.bytes().all(|b| b.is_ascii_alphabetic() || b == b'-') {
            return Err(err(
                at("request.method"),
                format!(
                    "`{}` is not an HTTP method",
                    crate::terminal::shown(&entry.request.method)
                ),
            ));
        }
        // A URL carries no control character (RFC 3986); one would reach route names and
        // every printout as a raw terminal escape.
        if let Some((i, c)) = entry
            .request
            .url
            .char_indices()
            .find(|(_, c)| c.is_control())
        {
            return Err(err(
                at("request.url"),
                format!(
                    "{:?} has a control character (U+{:04X}) at byte {i}, which no URL carries; \
                     percent-encode it (%{:02X}) or fix the recording",
                    entry.request.url,
                    u32::from(c),
                    u32::from(c) & 0xFF
                ),
            ));
        }
        let url = SplitUrl::parse(&entry.request.url).ok_or_else(|| {
            err(
                at("request.url"),
                format!(
                    "`{}` is not an absolute http(s) URL (a scheme http or https, a host, and if \
                     any a port from 1 to 65535)",
                    crate::terminal::shown(&entry.request.url)
                ),
            )
        })?;
        let origin = if url.scheme == base.scheme && url.authority == base.authority {
            None
        } else {
            Some(format!("{}://{}", url.scheme, url.authority))
        };
        // The twin's host outside its base path (`/oauth/token` beside `/v4`, or a web app's
        // pages in a browser's HAR) is not the API the twin answers: left out, as `wraith
        // record` passes such requests through unrecorded.
        if origin.is_none() && !base.covers_path(&url.path) {
            outside_base_path.push(format!(
                "log.entries[{i}]: {method} {}://{}{}",
                url.scheme, url.authority, url.path
            ));
            continue;
        }
        // `wraith serve` refuses a path with a `.` or `..` segment (400): such an exchange
        // could never be replayed, and its route would fail the twin's own check.
        if has_dot_segment(&url.path) {
            skipped.push(format!(
                "{}: the path {} has a `.` or `..` segment, which wraith serve refuses, so the \
                 exchange could never be replayed",
                at("request.url"),
                url.path
            ));
            continue;
        }
        check_headers(&entry.request.headers)
            .map_err(|(j, m)| err(at(&format!("request.headers[{j}]")), m))?;
        check_headers(&entry.response.headers)
            .map_err(|(j, m)| err(at(&format!("response.headers[{j}]")), m))?;
        let mut req_headers = to_headers(&sendable_headers(
            &entry.request.headers,
            &at("request.headers"),
            &mut warnings,
        ));
        let (req_body, post_mime) = match &entry.request.post_data {
            // An empty `text` is no body: the params, when there are some, are.
            Some(pd) => match pd
                .text
                .as_deref()
                .filter(|t| !t.is_empty() || pd.params.is_empty())
            {
                Some(text) => {
                    let body = decode_text(text, pd.encoding.as_deref())
                        .map_err(|m| err(at("request.postData.text"), m))?;
                    (body, pd.mime_type.clone())
                }
                None if !pd.params.is_empty() => {
                    let built = params_body(&pd.params, &pd.mime_type);
                    if let Some(said) = built.relabelled {
                        warnings.push(format!(
                            "{}: the body is given as `params` under the type `{said}`; it is \
                             stored form-encoded as `application/x-www-form-urlencoded`, the \
                             only body params make besides a multipart form",
                            at("request.postData")
                        ));
                    }
                    (built.body, built.content_type)
                }
                None => (Vec::new(), pd.mime_type.clone()),
            },
            None => (Vec::new(), String::new()),
        };
        // A request body sent compressed (`Content-Encoding` on the request) is stored decoded,
        // as the recorder stores one, so the scrubber sees inside it and synth reads it.
        let mut req_body = req_body;
        if let Decoding::Kept { codings, error } =
            decode_message_body(&mut req_headers, &mut req_body, DEFAULT_MAX_DECODED_BYTES)
        {
            warnings.push(format!(
                "{}: the request body is kept `{codings}`-encoded: {error}; the scrubber cannot \
                 see inside it and synth reads it as bytes",
                at("request.postData")
            ));
        }
        let req_ct = if req_body.is_empty() {
            None
        } else if !post_mime.is_empty() {
            add_content_type(&mut req_headers, &post_mime);
            Some(post_mime)
        } else {
            crate::exchange::header_value(&req_headers, "content-type").map(str::to_string)
        };
        // HTTP/2 pseudo-headers are not headers of the request a client sends.
        req_headers.retain(|k, _| !k.starts_with(':'));
        let mut resp_headers = to_headers(&sendable_headers(
            &entry.response.headers,
            &at("response.headers"),
            &mut warnings,
        ));
        resp_headers.retain(|k, _| !k.starts_with(':'));
        let (resp_body, resp_mime) = match &entry.response.content {
            Some(c) => {
                let body = match &c.text {
                    Some(t) => {
                        let mut body = decode_text(t, c.encoding.as_deref())
                            .map_err(|m| err(at("response.content.text"), m))?;
                        // HAR stores a response body decoded, but some producers put the bytes
                        // as they came (base64 of the gzip stream): those decode by the header's
                        // codings, a body stored decoded does not.
                        let base64 = c
                            .encoding
                            .as_deref()
                            .is_some_and(|e| e.eq_ignore_ascii_case("base64"));
                        if base64
                            && let Decoding::Decoded { codings } = decode_message_body(
                                &mut resp_headers,
                                &mut body,
                                DEFAULT_MAX_DECODED_BYTES,
                            )
                        {
                            warnings.push(format!(
                                "{}: the response body was stored `{codings}`-encoded, not \
                                 decoded as HAR says; it is recorded decoded",
                                at("response.content.text")
                            ));
                        }
                        resp_headers.shift_remove("content-encoding");
                        body
                    }
                    None => Vec::new(),
                };
                (body, c.mime_type.clone())
            }
            None => (Vec::new(), String::new()),
        };
        if !resp_body.is_empty() && (entry.response.status == 204 || entry.response.status == 304) {
            undeliverable_bodies.push(format!("log.entries[{i}] ({})", entry.response.status));
        } else if !resp_body.is_empty() && method == "HEAD" {
            undeliverable_bodies.push(format!("log.entries[{i}] (HEAD)"));
        }
        let resp_ct = if !resp_mime.is_empty() {
            if !resp_body.is_empty() {
                add_content_type(&mut resp_headers, &resp_mime);
            }
            Some(resp_mime)
        } else {
            crate::exchange::header_value(&resp_headers, "content-type").map(str::to_string)
        };
        let time = entry.time;
        let receive = entry.timings.and_then(|t| t.receive);
        let mut absurd = false;
        for (field, ms) in [("time", time), ("timings.receive", receive)] {
            if let Some(ms) = ms.filter(|ms| *ms > MAX_HAR_TIME_MS) {
                absurd = true;
                // `{:e}` past what a plain spelling shows short (`1e300`, not 301 digits).
                let ms = if ms < 1e15 {
                    ms.to_string()
                } else {
                    format!("{ms:e}")
                };
                warnings.push(format!(
                    "{}: {ms} ms is more than a day, which no exchange takes; the entry's \
                     timings are imported as zero (no recorded latency)",
                    at(field)
                ));
            }
        }
        // One absurd figure makes the entry's others meaningless too.
        let (time, receive) = if absurd {
            (None, None)
        } else {
            (time, receive)
        };
        let total_us = ms_to_us(time.unwrap_or(0.0));
        let receive_us = ms_to_us(receive.unwrap_or(0.0));
        let last_byte_us = start_us.saturating_add(total_us);
        let first_byte_us = last_byte_us.saturating_sub(receive_us).max(start_us);
        let exchange = Exchange {
            protocol: "http".to_string(),
            request: RecordedRequest {
                method,
                path: url.path,
                query: url.query,
                headers: req_headers,
                body: req_body.into(),
                content_type: req_ct,
                origin,
            },
            response: RecordedResponse {
                status: entry.response.status,
                headers: resp_headers,
                content_type: resp_ct,
                trailers: None,
            },
            frames: vec![Frame {
                direction: "server".to_string(),
                timestamp_us: first_byte_us,
                body: resp_body,
                frame_type: "data".to_string(),
            }],
            timing: Timing {
                request_start_us: start_us,
                first_byte_us,
                last_byte_us,
            },
            correlation: Correlation::default(),
            safety: Safety::default(),
            content: Content::default(),
            truncated: false,
        };
        // No file may hold more than `MAX_EXCHANGE_BYTES` of CBOR (no reader would take it
        // back): such an entry is refused here, before anything is written, as any other entry
        // the twin cannot hold.
        let size = crate::wrec::cbor_len(&exchange);
        if size > max_exchange_bytes {
            return Err(err(
                format!("log.entries[{i}]"),
                format!(
                    "the entry is {size} bytes as a recording, more than the {} \
                     ({max_exchange_bytes} bytes) one exchange file may hold, so no reader \
                     would take it back; leave the entry out of the HAR (or cut its bodies \
                     down) and import again",
                    crate::wrec::human_bytes(max_exchange_bytes)
                ),
            ));
        }
        exchanges.push(exchange);
    }
    if let Some(w) = undeliverable_body_warning(&undeliverable_bodies) {
        warnings.push(w);
    }
    Ok(HarSession {
        stem,
        exchanges,
        skipped,
        outside_base_path,
        warnings,
    })
}

/// At most this many entries are named in one warning; the rest are counted.
const NAMED_ENTRIES: usize = 5;

/// The warning naming the entries that record a body on an answer that carries none: a 204
/// or a 304 (RFC 9110 §15.3.5, §15.4.5), or the answer to a `HEAD`. The body stays in the
/// recording as it was captured, but no HTTP server can send it: the twin answers those
/// exchanges without one, and `wraith check` does not compare it.
fn undeliverable_body_warning(entries: &[String]) -> Option<String> {
    if entries.is_empty() {
        return None;
    }
    let named = entries
        .iter()
        .take(NAMED_ENTRIES)
        .map(String::as_str)
        .collect::<Vec<_>>()
        .join(", ");
    let more = entries.len().saturating_sub(NAMED_ENTRIES);
    let more = if more > 0 {
        format!(" and {more} more")
    } else {
        String::new()
    };
    let verb = if entries.len() == 1 {
        "records"
    } else {
        "record"
    };
    Some(format!(
        "{named}{more} {verb} a response body on an answer that carries none on the wire \
         (a 204, a 304 or the answer to a HEAD): the recording keeps it, but the twin answers \
         without it and `wraith check` does not compare it"
    ))
}

fn ms_to_us(ms: f64) -> u64 {
    // HAR uses -1 for "not applicable"; negative and non-finite times count as zero.
    if ms.is_finite() && ms > 0.0 {
        (ms * 1000.0).round() as u64
    } else {
        0
    }
}

fn parse_time_us(s: &str) -> Result<u64, String> {
    let ts: jiff::Timestamp = s
        .parse()
        .map_err(|e| format!("`{s}` is not an ISO 8601 date-time with offset: {e}"))?;
    u64::try_from(ts.as_microsecond()).map_err(|_| format!("`{s}` is before 1970"))
}

fn decode_text(text: &str, encoding: Option<&str>) -> Result<Vec<u8>, String> {
    match encoding {
        Some(enc) if enc.eq_ignore_ascii_case("base64") => {
            let compact: String = text.chars().filter(|c| !c.is_whitespace()).collect();
            base64::engine::general_purpose::STANDARD
                .decode(compact.as_bytes())
                .map_err(|e| format!("declared base64 but does not decode: {e}"))
        }
        Some(enc) if !enc.is_empty() => Err(format!(
            "unknown body encoding `{enc}` (only base64 is defined)"
        )),
        _ => Ok(text.as_bytes().to_vec()),
    }
}

/// Header names that are HTTP tokens (or HTTP/2 pseudo-headers, `:authority`) and values
/// without CR, LF or NUL: a recorded header the twin could not send again, or one that would
/// split its answer, is refused with its index.
fn check_headers(list: &[NameValue]) -> Result<(), (usize, String)> {
    let tchar = |b: u8| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b);
    for (j, nv) in list.iter().enumerate() {
        let name = nv.name.strip_prefix(':').unwrap_or(&nv.name);
        if name.is_empty() || !name.bytes().all(tchar) {
            return Err((
                j,
                format!(
                    "`{}` is not a header name (letters, digits and !#$%&'*+-.^_`|~ only)",
                    nv.name.escape_debug()
                ),
            ));
        }
        if let Some(c) = nv.value.chars().find(|c| matches!(c, '\r' | '\n' | '\0')) {
            return Err((
                j,
                format!(
                    "the value of `{}` holds {c:?}, which no header value can carry",
                    nv.name
                ),
            ));
        }
    }
    Ok(())
}

/// The headers of `list` (at `at`, `log.entries[i].response.headers`) whose values an HTTP
/// message can carry. A value holding a control character other than a tab (CR, LF and NUL
/// are refused before, by [`check_headers`]: `\u0001`, `\u001b`, DEL) is one neither the twin
/// nor the check's HTTP client can send: kept, the twin's files would hold a header its
/// answers never carry, and an in-memory check would see it where one over HTTP does not. It
/// is left out of the recording, with a warning naming the entry and the header. An HTTP/2
/// pseudo-header is left out afterwards anyway and is not named.
fn sendable_headers<'a>(
    list: &'a [NameValue],
    at: &str,
    warnings: &mut Vec<String>,
) -> Vec<&'a NameValue> {
    let mut kept = Vec::with_capacity(list.len());
    for (j, nv) in list.iter().enumerate() {
        let control = nv
            .value
            .chars()
            .find(|&c| c.is_ascii_control() && c != '\t');
        match control {
            Some(c) if !nv.name.starts_with(':') => warnings.push(format!(
                "{at}[{j}]: the value of `{}` holds U+{:04X}, a control character no HTTP \
                 header value can carry; the header is left out of the recording (the twin \
                 could not send it)",
                nv.name,
                u32::from(c)
            )),
            _ => kept.push(nv),
        }
    }
    kept
}

/// A `content-type` header of `mime` (the HAR's `mimeType`: what the body was) when `headers`
/// have none: a body answered, or sent, without one is read as bytes by clients and by the
/// twin's own check, which compares the recorded type.
fn add_content_type(headers: &mut Headers, mime: &str) {
    if crate::exchange::header_value(headers, "content-type").is_none() {
        headers.insert("content-type".to_string(), vec![mime.to_string()]);
    }
}

fn to_headers(list: &[&NameValue]) -> Headers {
    let mut h = Headers::new();
    for nv in list {
        h.entry(nv.name.to_ascii_lowercase())
            .or_default()
            .push(nv.value.clone());
    }
    h
}

fn form_encode(params: &[Param]) -> String {
    let mut ser = form_urlencoded::Serializer::new(String::new());
    for p in params {
        ser.append_pair(&p.name, &p.value);
    }
    ser.finish()
}

/// The request body `postData.params` stand for, and the content type to store with it.
struct ParamsBody {
    body: Vec<u8>,
    content_type: String,
    /// The `postData.mimeType` given, when it named neither a form nor a multipart form (the
    /// body is stored as a form, under the form's type).
    relabelled: Option<String>,
}

/// The boundary used for a multipart body built from params whose `mimeType` names none: fixed,
/// so the same HAR imports to the same bytes.
const PARAMS_BOUNDARY: &str = "----WraithHarImportBoundary";

/// The body `params` make in the form `mime_type` (`postData.mimeType`) names: a
/// `multipart/form-data` body with its boundary (or [`PARAMS_BOUNDARY`], named in the content
/// type, when it names none), each param a part (with `filename` and `Content-Type` when the
/// param has a `fileName` and a `contentType`); otherwise a urlencoded form, under
/// `application/x-www-form-urlencoded`. The body is then what its content type says, so the
/// scrubber reads it as the form it is (its form rules key on the content type).
fn params_body(params: &[Param], mime_type: &str) -> ParamsBody {
    let essence = mime_type
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    if essence == "multipart/form-data" {
        let (boundary, content_type) = match label_boundary(mime_type) {
            Some(b) => (b.to_string(), mime_type.to_string()),
            None => {
                let b = free_boundary(params);
                let ct = format!("multipart/form-data; boundary={b}");
                (b, ct)
            }
        };
        return ParamsBody {
            body: multipart_encode(params, &boundary),
            content_type,
            relabelled: None,
        };
    }
    let form = "application/x-www-form-urlencoded";
    let (content_type, relabelled) = if essence == form {
        (mime_type.to_string(), None)
    } else if essence.is_empty() {
        (form.to_string(), None)
    } else {
        (form.to_string(), Some(mime_type.to_string()))
    };
    ParamsBody {
        body: form_encode(params).into_bytes(),
        content_type,
        relabelled,
    }
}

/// The `boundary` parameter of a multipart content type, unquoted; `None` when it has none (or
/// an empty one).
fn label_boundary(content_type: &str) -> Option<&str> {
    let at = content_type.to_ascii_lowercase().find("boundary=")?;
    let rest = content_type.get(at + "boundary=".len()..)?;
    let b = rest.split(';').next()?.trim().trim_matches('"');
    (!b.is_empty()).then_some(b)
}

/// [`PARAMS_BOUNDARY`], or it with the first counter (`-1`, `-2`, …) that makes it a string
/// no param holds, so it splits the body only where the body's framing puts it.
fn free_boundary(params: &[Param]) -> String {
    let held = |b: &str| {
        params.iter().any(|p| {
            p.name.contains(b)
                || p.value.contains(b)
                || p.file_name.as_deref().is_some_and(|f| f.contains(b))
        })
    };
    let mut boundary = PARAMS_BOUNDARY.to_string();
    let mut n = 0u64;
    while held(&boundary) {
        n += 1;
        boundary = format!("{PARAMS_BOUNDARY}-{n}");
    }
    boundary
}

/// A `multipart/form-data` body (RFC 7578) of `params`, parts in order. A name or file name
/// has `"`, CR and LF percent-encoded, as browsers write them; a `contentType` holding CR or
/// LF, which would split the part's headers, is left out.
fn multipart_encode(params: &[Param], boundary: &str) -> Vec<u8> {
    let quoted = |s: &str| {
        s.replace('"', "%22")
            .replace('\r', "%0D")
            .replace('\n', "%0A")
    };
    let mut out = Vec::new();
    for p in params {
        out.extend_from_slice(format!("--{boundary}\r\n").as_bytes());
        let mut disposition = format!(
            "Content-Disposition: form-data; name=\"{}\"",
            quoted(&p.name)
        );
        if let Some(file) = &p.file_name {
            disposition.push_str(&format!("; filename=\"{}\"", quoted(file)));
        }
        out.extend_from_slice(disposition.as_bytes());
        out.extend_from_slice(b"\r\n");
        if let Some(ct) = p
            .content_type
            .as_deref()
            .filter(|ct| !ct.is_empty() && !ct.contains(['\r', '\n']))
        {
            out.extend_from_slice(format!("Content-Type: {ct}\r\n").as_bytes());
        }
        out.extend_from_slice(b"\r\n");
        out.extend_from_slice(p.value.as_bytes());
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(format!("--{boundary}--\r\n").as_bytes());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every printable ASCII character in a path and a query: each one the `http` crate's
    /// URI parser refuses is percent-encoded, so the stored request target parses; the others
    /// are kept as written.
    #[test]
    fn url_characters_no_request_target_carries_raw_are_percent_encoded() {
        for b in 0x20u8..0x7f {
            let c = char::from(b);
            if matches!(c, '/' | '?' | '#' | '%') {
                continue;
            }
            let url = format!("https://api.linode.com/v4beta/a{c}b?q=x{c}y");
            let u = SplitUrl::parse(&url).unwrap();
            let target = format!("{}?{}", u.path, u.query);
            assert!(
                http::Uri::try_from(target.as_str()).is_ok(),
                "{c:?}: {target}"
            );
            let raw_path_ok = http::Uri::try_from(format!("/a{c}b")).is_ok();
            let raw_query_ok = http::Uri::try_from(format!("/a?x{c}y")).is_ok();
            let kept = !UNSENDABLE.contains(&b);
            assert_eq!(u.path == format!("/v4beta/a{c}b"), kept, "{c:?}");
            assert_eq!(u.query == format!("q=x{c}y"), kept, "{c:?}");
            assert!(
                kept || !raw_path_ok || !raw_query_ok || c == '\\',
                "{c:?} needs no encoding"
            );
        }
        let u = SplitUrl::parse("https://h/v1/red shoes/caf\u{e9}?q=red shoes&t=\"a\"").unwrap();
        assert_eq!(u.path, "/v1/red%20shoes/caf\u{e9}");
        assert_eq!(u.query, "q=red%20shoes&t=%22a%22");
    }

    #[test]
    fn a_url_port_must_be_a_number_from_1_to_65535() {
        for ok in [
            "http://localhost:3000/x",
            "http://localhost:65535/x",
            "http://localhost:/x",
            "http://[::1]:8080/x",
            "http://[::1]/x",
        ] {
            assert!(SplitUrl::parse(ok).is_some(), "{ok}");
        }
        for bad in [
            "http://localhost:99999/x",
            "http://localhost:0/x",
            "http://localhost:80a/x",
            "http://[::1:8080/x",
            "http://[::1]x/x",
        ] {
            assert!(SplitUrl::parse(bad).is_none(), "{bad}");
        }
    }

    fn base() -> BaseUrl {
        BaseUrl::parse("https://api.linode.com/v4beta").unwrap()
    }

    fn har(entries: &str) -> Vec<u8> {
        format!(r#"{{"log":{{"version":"1.2","entries":[{entries}]}}}}"#).into_bytes()
    }

    const OK_ENTRY: &str = r#"{"startedDateTime":"2000-01-01T00:00:00.000Z","time":2.5,
        "request":{"method":"get","url":"https://API.linode.com:443/v4beta/regions?page=2#x",
          "headers":[{"name":"X-Filter","value":"{}"},{"name":"Accept","value":"a"},{"name":"accept","value":"b"}]},
        "response":{"status":200,"headers":[{"name":"Content-Type","value":"application/json"}],
          "content":{"size":2,"mimeType":"application/json","text":"{}"}}}"#;

    #[test]
    fn entry_becomes_exchange_with_prefix_kept_and_timing() {
        let s = parse_har(&har(OK_ENTRY), Path::new("d/TestRegions.har"), &base()).unwrap();
        assert_eq!(s.stem, "TestRegions");
        let e = &s.exchanges[0];
        assert_eq!(e.request.method, "GET");
        assert_eq!(e.request.path, "/v4beta/regions");
        assert_eq!(e.request.query, "page=2");
        assert_eq!(e.request.origin, None);
        assert_eq!(e.request.headers["accept"], ["a", "b"]);
        assert_eq!(e.request.content_type, None);
        assert_eq!(e.response.content_type.as_deref(), Some("application/json"));
        assert_eq!(e.response_body(), b"{}");
        assert_eq!(e.timing.request_start_us, 946_684_800_000_000);
        assert_eq!(e.timing.last_byte_us, 946_684_800_002_500);
    }

    #[test]
    fn other_host_keeps_origin() {
        let entry = OK_ENTRY.replace("API.linode.com:443", "us-east-1.linodeobjects.com");
        let s = parse_har(&har(&entry), Path::new("x.har"), &base()).unwrap();
        assert_eq!(
            s.exchanges[0].request.origin.as_deref(),
            Some("https://us-east-1.linodeobjects.com")
        );
    }

    #[test]
    fn an_entry_on_the_base_host_outside_its_path_is_left_out_and_named() {
        let token = OK_ENTRY.replace(
            "API.linode.com:443/v4beta/regions?page=2#x",
            "api.linode.com/oauth/token?client_secret=s",
        );
        let near = OK_ENTRY.replace("/v4beta/regions", "/v4betax/regions");
        let whole = OK_ENTRY.replace("/v4beta/regions?page=2", "/v4beta?page=2");
        let entries = format!("{token},{OK_ENTRY},{near},{whole}");
        let s = parse_har(&har(&entries), Path::new("o.har"), &base()).unwrap();
        let paths: Vec<&str> = s
            .exchanges
            .iter()
            .map(|e| e.request.path.as_str())
            .collect();
        assert_eq!(paths, ["/v4beta/regions", "/v4beta"]);
        assert_eq!(
            s.outside_base_path,
            [
                "log.entries[0]: GET https://api.linode.com/oauth/token",
                "log.entries[2]: GET https://api.linode.com/v4betax/regions"
            ]
        );
        assert!(s.skipped.is_empty());
        let root = BaseUrl::parse("https://api.linode.com").unwrap();
        let s = parse_har(&har(&entries), Path::new("o.har"), &root).unwrap();
        assert_eq!(s.exchanges.len(), 4);
        assert!(s.outside_base_path.is_empty());
    }

    #[test]
    fn a_compressed_request_body_is_decoded_so_its_secrets_are_scrubbed() {
        use std::io::Write;
        let plain = br#"{"password":"hunter2","name":"bob"}"#;
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        gz.write_all(plain).unwrap();
        let mut zlib = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
        zlib.write_all(plain).unwrap();
        let mut br = Vec::new();
        {
            let mut w = brotli::CompressorWriter::new(&mut br, 4096, 9, 22);
            w.write_all(plain).unwrap();
        }
        let b64 = |bytes: Vec<u8>| base64::engine::general_purpose::STANDARD.encode(bytes);
        let entry = |coding: &str, text: String| {
            format!(
                r#"{{"startedDateTime":"2000-01-01T00:00:00Z","request":{{"method":"POST","url":"https://api.linode.com/v4beta/x",
                "headers":[{{"name":"Content-Encoding","value":"{coding}"}},{{"name":"Content-Type","value":"application/json"}}],
                "postData":{{"mimeType":"application/json","text":"{text}","_encoding":"base64"}}}},
                "response":{{"status":200}}}}"#
            )
        };
        let entries = [
            entry("gzip", b64(gz.finish().unwrap())),
            entry("deflate", b64(zlib.finish().unwrap())),
            entry("br", b64(br)),
            entry("compress", b64(b"not decoded".to_vec())),
        ]
        .join(",");
        let s = parse_har(&har(&entries), Path::new("x.har"), &base()).unwrap();
        let scrubber = crate::scrub::Scrubber::new(
            crate::scrub::ScrubPolicy::builtin_only(),
            crate::scrub::HmacKey::from_bytes(b"k".to_vec()),
        );
        for e in &s.exchanges[..3] {
            assert_eq!(e.request.body[..], plain[..]);
            assert_eq!(e.request_header("content-encoding"), None);
            let scrubbed = scrubber.scrub(e.clone());
            let body = String::from_utf8(scrubbed.exchange().request.body.to_vec()).unwrap();
            assert!(
                !body.contains("hunter2") && body.contains("wraith_tok_"),
                "{body}"
            );
        }
        // A coding Wraith does not decode is kept, with its header, and said.
        assert_eq!(s.exchanges[3].request.body[..], b"not decoded"[..]);
        assert_eq!(
            s.exchanges[3].request_header("content-encoding"),
            Some("compress")
        );
        assert_eq!(s.warnings.len(), 1);
        assert!(
            s.warnings[0].starts_with("log.entries[3].request.postData: ")
                && s.warnings[0].contains("`compress`"),
            "{:?}",
            s.warnings
        );
    }

    /// HAR says a response body is stored decoded; one a producer stored as it came (base64 of
    /// the gzip stream) is decoded by its `Content-Encoding`, so the scrubber sees its secrets,
    /// while a base64 body that was decoded already is kept as it is.
    #[test]
    fn a_response_body_stored_still_compressed_is_decoded_so_its_secrets_are_scrubbed() {
        use std::io::Write;
        let plain = br#"{"access_token":"hunter2hunter2","name":"bob"}"#;
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        gz.write_all(plain).unwrap();
        let b64 = |bytes: &[u8]| base64::engine::general_purpose::STANDARD.encode(bytes);
        let entry = |text: String| {
            format!(
                r#"{{"startedDateTime":"2000-01-01T00:00:00Z","request":{{"method":"GET","url":"https://api.linode.com/v4beta/x"}},
                "response":{{"status":200,"headers":[{{"name":"Content-Encoding","value":"gzip"}},{{"name":"Content-Type","value":"application/json"}}],
                "content":{{"mimeType":"application/json","text":"{text}","encoding":"base64"}}}}}}"#
            )
        };
        let entries = [entry(b64(&gz.finish().unwrap())), entry(b64(plain))].join(",");
        let s = parse_har(&har(&entries), Path::new("x.har"), &base()).unwrap();
        for e in &s.exchanges {
            assert_eq!(e.response_body(), &plain[..]);
            assert_eq!(e.response_header("content-encoding"), None);
        }
        assert_eq!(s.warnings.len(), 1, "{:?}", s.warnings);
        assert!(
            s.warnings[0].starts_with("log.entries[0].response.content.text: ")
                && s.warnings[0].contains("`gzip`"),
            "{:?}",
            s.warnings
        );
        let scrubber = crate::scrub::Scrubber::new(
            crate::scrub::ScrubPolicy::builtin_only(),
            crate::scrub::HmacKey::from_bytes(b"k".to_vec()),
        );
        let scrubbed = scrubber.scrub(s.exchanges[0].clone());
        let body = String::from_utf8(scrubbed.exchange().response_body().to_vec()).unwrap();
        assert!(!body.contains("hunter2"), "{body}");
    }

    /// A POST entry whose `postData` is `params` only, under `mime`.
    fn params_entry(mime: &str, params: &str) -> String {
        format!(
            r#"{{"startedDateTime":"2000-01-01T00:00:00Z","request":{{"method":"POST","url":"https://api.linode.com/v4beta/login",
            "postData":{{"mimeType":"{mime}","params":[{params}]}}}},"response":{{"status":200}}}}"#
        )
    }

    const LOGIN_PARAMS: &str =
        r#"{"name":"user","value":"bob"},{"name":"password","value":"hunter2"}"#;

    #[test]
    fn params_under_a_multipart_type_become_a_multipart_body_with_its_boundary() {
        let file = r#",{"name":"avatar","value":"PNG","fileName":"a \"b\".png","contentType":"image/png"}"#;
        let entry = params_entry(
            "multipart/form-data; boundary=XYZ",
            &format!("{LOGIN_PARAMS}{file}"),
        );
        let s = parse_har(&har(&entry), Path::new("m.har"), &base()).unwrap();
        let e = &s.exchanges[0];
        assert_eq!(
            e.request.content_type.as_deref(),
            Some("multipart/form-data; boundary=XYZ")
        );
        assert_eq!(
            std::str::from_utf8(&e.request.body).unwrap(),
            "--XYZ\r\nContent-Disposition: form-data; name=\"user\"\r\n\r\nbob\r\n\
             --XYZ\r\nContent-Disposition: form-data; name=\"password\"\r\n\r\nhunter2\r\n\
             --XYZ\r\nContent-Disposition: form-data; name=\"avatar\"; filename=\"a %22b%22.png\"\r\n\
             Content-Type: image/png\r\n\r\nPNG\r\n--XYZ--\r\n"
        );
        assert!(s.warnings.is_empty(), "{:?}", s.warnings);
    }

    #[test]
    fn params_under_a_multipart_type_without_a_boundary_get_a_fixed_one_named_in_the_type() {
        let entry = params_entry("multipart/form-data", LOGIN_PARAMS);
        let a = parse_har(&har(&entry), Path::new("m.har"), &base()).unwrap();
        let b = parse_har(&har(&entry), Path::new("m.har"), &base()).unwrap();
        let e = &a.exchanges[0];
        assert_eq!(
            e.request.content_type.as_deref(),
            Some(format!("multipart/form-data; boundary={PARAMS_BOUNDARY}").as_str())
        );
        assert_eq!(e.request.body, b.exchanges[0].request.body, "deterministic");
        let fields = crate::scrub::multipart::text_fields(
            e.request.content_type.as_deref().unwrap(),
            &e.request.body,
        )
        .unwrap();
        assert_eq!(fields.len(), 2);
        // A value holding the fixed boundary moves it on.
        let held = format!(r#"{{"name":"note","value":"{PARAMS_BOUNDARY}"}}"#);
        let s = parse_har(
            &har(&params_entry("multipart/form-data", &held)),
            Path::new("m.har"),
            &base(),
        );
        assert_eq!(
            s.unwrap().exchanges[0].request.content_type.as_deref(),
            Some(format!("multipart/form-data; boundary={PARAMS_BOUNDARY}-1").as_str())
        );
    }

    #[test]
    fn params_under_another_type_are_stored_as_a_form_under_the_forms_type_with_a_warning() {
        for (mime, warned) in [
            ("application/json", true),
            ("", false),
            ("application/x-www-form-urlencoded; charset=UTF-8", false),
        ] {
            let s = parse_har(
                &har(&params_entry(mime, LOGIN_PARAMS)),
                Path::new("f.har"),
                &base(),
            )
            .unwrap();
            let e = &s.exchanges[0];
            assert_eq!(
                e.request.body[..],
                b"user=bob&password=hunter2"[..],
                "{mime}"
            );
            let want = if mime.is_empty() || warned {
                "application/x-www-form-urlencoded"
            } else {
                mime
            };
            assert_eq!(e.request.content_type.as_deref(), Some(want), "{mime}");
            assert_eq!(
                s.warnings.len(),
                usize::from(warned),
                "{mime}: {:?}",
                s.warnings
            );
            if warned {
                let w = &s.warnings[0];
                assert!(w.starts_with("log.entries[0].request.postData: "), "{w}");
                assert!(w.contains("`application/json`"), "{w}");
            }
        }
    }

    #[test]
    fn an_empty_post_data_text_beside_params_leaves_the_body_to_the_params() {
        let entry = params_entry("application/x-www-form-urlencoded", LOGIN_PARAMS)
            .replace(r#""params":"#, r#""text":"","params":"#);
        let s = parse_har(&har(&entry), Path::new("e.har"), &base()).unwrap();
        let e = &s.exchanges[0];
        assert_eq!(e.request.body[..], b"user=bob&password=hunter2"[..]);
        assert_eq!(
            e.request.content_type.as_deref(),
            Some("application/x-www-form-urlencoded")
        );
        // Without params, an empty text is an empty body.
        let entry =
            params_entry("application/json", "").replace(r#""params":"#, r#""text":"","params":"#);
        let s = parse_har(&har(&entry), Path::new("e.har"), &base()).unwrap();
        assert!(s.exchanges[0].request.body.is_empty());
        assert_eq!(s.exchanges[0].request.content_type, None);
    }

    #[test]
    fn a_password_given_as_params_is_scrubbed_whatever_the_type_says() {
        let scrubber = crate::scrub::Scrubber::new(
            crate::scrub::ScrubPolicy::builtin_only(),
            crate::scrub::HmacKey::from_bytes(b"k".to_vec()),
        );
        for mime in [
            "multipart/form-data; boundary=XYZ",
            "multipart/form-data",
            "",
            "application/json",
            "application/x-www-form-urlencoded",
        ] {
            let s = parse_har(
                &har(&params_entry(mime, LOGIN_PARAMS)),
                Path::new("p.har"),
                &base(),
            )
            .unwrap();
            let out = scrubber.scrub(s.exchanges[0].clone());
            let body = String::from_utf8(out.exchange().request.body.to_vec()).unwrap();
            assert!(
                !body.contains("hunter2") && body.contains("wraith_tok_") && body.contains("bob"),
                "{mime}: {body}"
            );
        }
    }

    #[test]
    fn base64_bodies_decoded() {
        let entry = r#"{"startedDateTime":"2000-01-01T00:00:00Z","request":{"method":"POST","url":"https://api.linode.com/v4beta/x",
            "postData":{"mimeType":"application/octet-stream","text":"AAEC/w==","_encoding":"base64"}},
            "response":{"status":201,"content":{"mimeType":"application/octet-stream","text":"AP8=","encoding":"base64"}}}"#;
        let s = parse_har(&har(entry), Path::new("x.har"), &base()).unwrap();
        assert_eq!(s.exchanges[0].request.body, vec![0, 1, 2, 255]);
        assert_eq!(s.exchanges[0].response_body(), vec![0, 255]);
        assert_eq!(
            s.exchanges[0].request.content_type.as_deref(),
            Some("application/octet-stream")
        );
    }

    /// Base64 wrapped MIME-style (line breaks every so many characters, or spaces) decodes as
    /// the unwrapped text would: the whitespace is no part of the encoding.
    #[test]
    fn base64_bodies_wrapped_across_lines_decode() {
        let entry = r#"{"startedDateTime":"2000-01-01T00:00:00Z","request":{"method":"POST","url":"https://api.linode.com/v4beta/x",
            "postData":{"mimeType":"application/json","text":"eyJwYXNz\r\nd29yZCI6\nImh1bnRl cjIifQ==\n","_encoding":"base64"}},
            "response":{"status":201,"content":{"mimeType":"application/octet-stream","text":"AAEC\r\n\t/w==","encoding":"base64"}}}"#;
        let s = parse_har(&har(entry), Path::new("x.har"), &base()).unwrap();
        assert_eq!(
            s.exchanges[0].request.body[..],
            br#"{"password":"hunter2"}"#[..]
        );
        assert_eq!(s.exchanges[0].response_body(), vec![0, 1, 2, 255]);
    }

    #[test]
    fn post_data_encoding_without_the_underscore_is_read_as_underscore_encoding() {
        let entry = r#"{"startedDateTime":"2000-01-01T00:00:00Z","request":{"method":"POST","url":"https://api.linode.com/v4beta/x",
            "postData":{"mimeType":"application/json","text":"eyJwYXNzd29yZCI6Imh1bnRlcjIifQ==","encoding":"base64"}},
            "response":{"status":201}}"#;
        let s = parse_har(&har(entry), Path::new("x.har"), &base()).unwrap();
        assert_eq!(
            s.exchanges[0].request.body[..],
            br#"{"password":"hunter2"}"#[..]
        );
    }

    #[test]
    fn a_body_with_a_mime_type_and_no_content_type_header_gets_one() {
        let entry = r#"{"startedDateTime":"2000-01-01T00:00:00Z","request":{"method":"POST","url":"https://api.linode.com/v4beta/x",
            "postData":{"mimeType":"application/json","text":"{}"}},
            "response":{"status":201,"content":{"mimeType":"application/json","text":"[]"}}}"#;
        let s = parse_har(&har(entry), Path::new("x.har"), &base()).unwrap();
        let e = &s.exchanges[0];
        assert_eq!(e.request_header("content-type"), Some("application/json"));
        assert_eq!(e.response_header("content-type"), Some("application/json"));
        // A header the HAR gives is kept as it is; an empty body gets none.
        let given = entry.replace(
            r#""postData""#,
            r#""headers":[{"name":"Content-Type","value":"application/json; charset=utf-8"}],"postData""#,
        );
        let s = parse_har(&har(&given), Path::new("x.har"), &base()).unwrap();
        assert_eq!(
            s.exchanges[0].request.headers["content-type"],
            ["application/json; charset=utf-8"]
        );
        let empty = entry.replace(r#""text":"[]""#, r#""text":"""#);
        let s = parse_har(&har(&empty), Path::new("x.har"), &base()).unwrap();
        assert_eq!(s.exchanges[0].response_header("content-type"), None);
    }

    #[test]
    fn a_null_mime_type_header_value_or_header_list_reads_as_absent() {
        let entry = r#"{"startedDateTime":"2000-01-01T00:00:00Z","request":{"method":"POST","url":"https://api.linode.com/v4beta/x",
            "headers":[{"name":"X-Empty","value":null}],
            "postData":{"mimeType":null,"text":"a=1","params":null}},
            "response":{"status":200,"headers":null,"content":{"mimeType":null,"text":"{}"}}}"#;
        let s = parse_har(&har(entry), Path::new("x.har"), &base()).unwrap();
        let e = &s.exchanges[0];
        assert_eq!(e.request.headers["x-empty"], [""]);
        assert_eq!(e.request.body[..], b"a=1"[..]);
        assert_eq!(e.request.content_type, None);
        assert_eq!(e.response.content_type, None);
        assert_eq!(e.response_body(), b"{}");
    }

    #[test]
    fn a_byte_order_mark_is_read_past_and_a_non_utf8_file_is_named_as_such() {
        let mut with_bom = b"\xEF\xBB\xBF".to_vec();
        with_bom.extend(har(OK_ENTRY));
        let s = parse_har(&with_bom, Path::new("bom.har"), &base()).unwrap();
        assert_eq!(s.exchanges.len(), 1);
        let mut latin1 = har(OK_ENTRY);
        latin1.insert(2, 0xE9);
        let e = parse_har(&latin1, Path::new("l.har"), &base()).unwrap_err();
        assert!(e.to_string().contains("not UTF-8 text"), "{e}");
    }

    #[test]
    fn a_body_recorded_on_a_204_a_304_or_a_head_answer_is_kept_with_one_warning_naming_them() {
        let no_content = OK_ENTRY.replace(r#""status":200"#, r#""status":204"#);
        let not_modified = OK_ENTRY.replace(r#""status":200"#, r#""status":304"#);
        let head = OK_ENTRY.replace(r#""method":"get""#, r#""method":"HEAD""#);
        let empty_204 = no_content.replace(r#""text":"{}""#, r#""text":"""#);
        let entries = [OK_ENTRY, &no_content, &not_modified, &head, &empty_204].join(",");
        let s = parse_har(&har(&entries), Path::new("b.har"), &base()).unwrap();
        assert_eq!(s.exchanges.len(), 5);
        assert_eq!(s.exchanges[1].response_body(), b"{}", "kept as recorded");
        assert_eq!(s.warnings.len(), 1, "{:?}", s.warnings);
        let w = &s.warnings[0];
        assert!(
            w.starts_with("log.entries[1] (204), log.entries[2] (304), log.entries[3] (HEAD) record a response body"),
            "{w}"
        );
        assert!(w.contains("the twin answers without it"), "{w}");
        let clean = parse_har(
            &har(&[OK_ENTRY, &empty_204].join(",")),
            Path::new("c.har"),
            &base(),
        );
        assert!(clean.unwrap().warnings.is_empty());
    }

    #[test]
    fn a_header_value_with_another_control_character_is_left_out_with_a_warning_naming_it() {
        let entry = OK_ENTRY
            .replacen(
                "\"headers\":[",
                "\"headers\":[{\"name\":\"X-Bell\",\"value\":\"a\\u0007b\"},",
                1,
            )
            .replace(
                r#"{"name":"Content-Type","value":"application/json"}"#,
                r#"{"name":"Content-Type","value":"application/json"},{"name":"X-Trace","value":"t\u001b[0m"},{"name":"X-Tab","value":"a\tb"}"#,
            );
        let s = parse_har(&har(&entry), Path::new("c.har"), &base()).unwrap();
        let e = &s.exchanges[0];
        assert!(!e.request.headers.contains_key("x-bell"));
        assert!(!e.response.headers.contains_key("x-trace"));
        assert_eq!(
            e.response.headers["x-tab"],
            ["a\tb"],
            "a tab is a header value's own"
        );
        assert_eq!(e.response.headers["content-type"], ["application/json"]);
        assert_eq!(s.warnings.len(), 2, "{:?}", s.warnings);
        assert!(
            s.warnings[0].starts_with(
                "log.entries[0].request.headers[0]: the value of `X-Bell` holds U+0007"
            ),
            "{}",
            s.warnings[0]
        );
        assert!(
            s.warnings[1].starts_with(
                "log.entries[0].response.headers[1]: the value of `X-Trace` holds U+001B"
            ),
            "{}",
            s.warnings[1]
        );
        assert!(s.warnings[1].contains("left out of the recording"));
    }

    #[test]
    fn a_header_no_http_message_can_carry_is_refused_with_its_place() {
        let bad_name = OK_ENTRY.replacen(
            "\"headers\":[",
            "\"headers\":[{\"name\":\"Bad Header\\n\",\"value\":\"x\"},",
            1,
        );
        let e = parse_har(&har(&bad_name), Path::new("n.har"), &base()).unwrap_err();
        assert_eq!(e.json_path, "log.entries[0].request.headers[0]");
        assert!(e.to_string().contains("not a header name"), "{e}");
        let bad_value = OK_ENTRY.replacen(
            "\"headers\":[",
            "\"headers\":[{\"name\":\"x-ok\",\"value\":\"a\\r\\nset-cookie: b\"},",
            1,
        );
        let e = parse_har(&har(&bad_value), Path::new("v.har"), &base()).unwrap_err();
        assert!(e.to_string().contains("no header value can carry"), "{e}");
        let pseudo = OK_ENTRY.replacen(
            "\"headers\":[",
            "\"headers\":[{\"name\":\":authority\",\"value\":\"api.linode.com\"},",
            1,
        );
        assert!(parse_har(&har(&pseudo), Path::new("p.har"), &base()).is_ok());
    }

    #[test]
    fn a_lone_surrogate_escape_reads_as_u_fffd_with_a_warning_naming_its_entry() {
        let lone = OK_ENTRY.replace(r#""text":"{}""#, r#""text":"a\ud800b\\ud800\uDC00z""#);
        let pair = OK_ENTRY.replace(r#""text":"{}""#, r#""text":"\ud83d\ude00""#);
        let s = parse_har(
            &har(&format!("{pair},\n{lone}")),
            Path::new("s.har"),
            &base(),
        )
        .unwrap();
        assert_eq!(s.exchanges[0].response_body(), "\u{1F600}".as_bytes());
        // The escaped backslash is text, not an escape; the low half alone is lone too.
        assert_eq!(
            s.exchanges[1].response_body(),
            "a\u{FFFD}b\\ud800\u{FFFD}z".as_bytes()
        );
        assert_eq!(s.warnings.len(), 1, "{:?}", s.warnings);
        let w = &s.warnings[0];
        assert!(w.contains("2 lone UTF-16 surrogate escape(s)"), "{w}");
        assert!(w.contains("in log.entries[1]"), "{w}");
        assert!(!w.contains("log.entries[0]"), "{w}");
        assert!(w.contains("\\ud800 at line 10, column 70"), "{w}");
        assert!(w.contains("U+FFFD"), "{w}");
        let clean = parse_har(&har(&pair), Path::new("c.har"), &base()).unwrap();
        assert!(clean.warnings.is_empty());
        // A surrogate escape outside any entry is named as such.
        let doc = format!(r#"{{"log":{{"creator":{{"name":"\udfff"}},"entries":[{OK_ENTRY}]}}}}"#);
        let s = parse_har(doc.as_bytes(), Path::new("d.har"), &base()).unwrap();
        assert!(
            s.warnings[0].contains("outside log.entries"),
            "{:?}",
            s.warnings
        );
    }

    #[test]
    fn a_second_document_after_the_har_is_refused_not_dropped() {
        let one = String::from_utf8(har(OK_ENTRY)).unwrap();
        let two = format!("{one}\n{one}");
        let e = parse_har(two.as_bytes(), Path::new("both.har"), &base()).unwrap_err();
        assert_eq!(e.json_path, "(document)");
        assert!(e.to_string().contains("more than one JSON document"), "{e}");
        let trailing = format!("{one} }}}}garbage[");
        assert!(parse_har(trailing.as_bytes(), Path::new("t.har"), &base()).is_err());
        let whitespace = format!("{one}\n\n  \n");
        assert!(parse_har(whitespace.as_bytes(), Path::new("w.har"), &base()).is_ok());
    }

    /// serde reads a struct from an array by position: a document that is an array (or any
    /// other value) is named as not being the object a HAR is, before any deeper path.
    #[test]
    fn a_document_that_is_not_an_object_is_named_as_such() {
        for (doc, starts) in [
            (&b"[[[[1]]]]"[..], "`[`"),
            (b"  \n[1, 2, 3]", "`[`"),
            (b"\"log\"", "`\\\"`"),
        ] {
            let e = parse_har(doc, Path::new("a.har"), &base()).unwrap_err();
            assert_eq!(e.json_path, "(document)");
            let text = e.to_string();
            assert!(text.contains("a JSON object with a `log` key"), "{text}");
            assert!(text.contains(starts), "{text}");
        }
    }

    #[test]
    fn errors_name_file_and_json_path() {
        let bad_url = OK_ENTRY.replace(
            "https://API.linode.com:443/v4beta/regions?page=2#x",
            "/relative",
        );
        let entries = format!("{OK_ENTRY},{OK_ENTRY},{OK_ENTRY},{bad_url}");
        let e = parse_har(&har(&entries), Path::new("t/bad.har"), &base()).unwrap_err();
        assert_eq!(e.json_path, "log.entries[3].request.url");
        assert!(e.to_string().contains("t/bad.har"));
        let no_http_status = OK_ENTRY.replace("\"status\":200,", "\"status\":42,");
        let e = parse_har(&har(&no_http_status), Path::new("b.har"), &base()).unwrap_err();
        assert_eq!(e.json_path, "log.entries[0].response.status");
        assert!(e.to_string().contains("42 is not an HTTP status"), "{e}");
        let escape = OK_ENTRY.replace("v4beta/regions", "v4beta/\\u001b[32mregions");
        let e = parse_har(&har(&escape), Path::new("b.har"), &base()).unwrap_err();
        assert_eq!(e.json_path, "log.entries[0].request.url");
        assert!(e.to_string().contains("control character (U+001B)"), "{e}");
        assert!(e.to_string().contains("%1B"), "{e}");
        assert!(
            !e.to_string().contains('\u{1b}'),
            "the message prints no raw escape: {e}"
        );
        let missing_status = OK_ENTRY.replace("\"status\":200,", "");
        let e = parse_har(&har(&missing_status), Path::new("b.har"), &base()).unwrap_err();
        assert_eq!(e.json_path, "log.entries[0].response");
        let e = parse_har(
            b"{\"log\":{\"entries\":[{\"startedDateTime\":5}]}}",
            Path::new("b.har"),
            &base(),
        )
        .unwrap_err();
        assert_eq!(e.json_path, "log.entries[0].startedDateTime");
        let bad_b64 = r#"{"startedDateTime":"2000-01-01T00:00:00Z","request":{"method":"POST","url":"https://h/x",
            "postData":{"text":"@@@","_encoding":"base64"}},"response":{"status":200}}"#;
        let e = parse_har(&har(bad_b64), Path::new("b.har"), &base()).unwrap_err();
        assert_eq!(e.json_path, "log.entries[0].request.postData.text");
        let e = parse_har(b"not json", Path::new("b.har"), &base()).unwrap_err();
        assert!(e.to_string().contains("b.har"));
    }

    #[test]
    fn an_entry_past_the_exchange_limit_is_an_error_naming_it() {
        let big = OK_ENTRY.replace(
            "\"text\":\"{}\"",
            &format!("\"text\":\"{}\"", "x".repeat(5000)),
        );
        let entries = format!("{OK_ENTRY},{big}");
        let fits = parse_har_limited(&har(&entries), Path::new("t/big.har"), &base(), 6000);
        let fits = fits.unwrap();
        let size = crate::wrec::cbor_len(&fits.exchanges[1]);
        assert!(size > 5000, "{size}");
        let e = parse_har_limited(&har(&entries), Path::new("t/big.har"), &base(), size - 1)
            .unwrap_err();
        assert_eq!(e.json_path, "log.entries[1]");
        let text = e.to_string();
        assert!(text.contains("t/big.har"), "{text}");
        assert!(
            text.contains(&format!(
                "the entry is {size} bytes as a recording, more than"
            )),
            "{text}"
        );
        assert!(text.contains("leave the entry out of the HAR"), "{text}");
        // The public parser holds entries to the files' own limit.
        assert!(parse_har(&har(&entries), Path::new("t/big.har"), &base()).is_ok());
    }

    #[test]
    fn base_url_parse_normalizes() {
        let b = BaseUrl::parse("HTTP://LocalHost:80/").unwrap();
        assert_eq!(
            (
                b.scheme.as_str(),
                b.authority.as_str(),
                b.path_prefix.as_str()
            ),
            ("http", "localhost", "")
        );
        assert_eq!(
            BaseUrl::parse("http://localhost:3000").unwrap().authority,
            "localhost:3000"
        );
        assert!(BaseUrl::parse("localhost:3000").is_err());
    }
}
