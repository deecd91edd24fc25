//! How a concrete request is keyed for exact replay. Synth (building the index) and the engine
//! (looking it up) must agree byte for byte, so both call these functions.

use std::collections::BTreeSet;

use sha2::{Digest, Sha256};

use crate::types::{Model, RequestKey};

/// The hash a model's request keys fingerprint bodies with ([`RequestKey::body`]). Synth
/// writes [`BodyHash::Blake3`]; a model synthesized before holds SHA-256 keys, and the engine
/// keys requests as the model it serves does ([`BodyHash::in_model`]), so such a model still
/// replays its recordings exactly without a new synth.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum BodyHash {
    /// `b3:` and the lowercase hex BLAKE3 digest. Every replayed upload is hashed whole, and
    /// BLAKE3 hashes a multi-megabyte one about four times as fast as SHA-256.
    #[default]
    Blake3 = 0,
    /// The lowercase hex SHA-256 digest, no prefix: models written before BLAKE3 keys.
    Sha256 = 1,
}

/// The prefix of a [`BodyHash::Blake3`] fingerprint.
const BLAKE3_TAG: &str = "b3:";

impl BodyHash {
    /// The hash `fingerprint` (a [`RequestKey::body`]) was made with.
    pub fn of_fingerprint(fingerprint: &str) -> BodyHash {
        if fingerprint.starts_with(BLAKE3_TAG) {
            BodyHash::Blake3
        } else {
            BodyHash::Sha256
        }
    }

    /// The hashes `model`'s request keys were made with, this build's first: one for a model
    /// synth wrote, two for one composed of twins synthesized before and after BLAKE3 keys.
    /// [`BodyHash::default`] alone when no key has a body.
    pub fn in_model(model: &Model) -> Vec<BodyHash> {
        let mut found = [false; 2];
        for body in model
            .routes
            .iter()
            .flat_map(|r| r.exact.iter())
            .filter_map(|e| e.key.body.as_deref())
        {
            found[BodyHash::of_fingerprint(body) as usize] = true;
            if found == [true; 2] {
                break;
            }
        }
        let hashes: Vec<BodyHash> = [BodyHash::Blake3, BodyHash::Sha256]
            .into_iter()
            .filter(|h| found[*h as usize])
            .collect();
        if hashes.is_empty() {
            vec![BodyHash::default()]
        } else {
            hashes
        }
    }
}

/// A fingerprint being hashed, with either [`BodyHash`].
enum KeyHasher {
    Sha256(Sha256),
    Blake3(Box<blake3::Hasher>),
}

impl KeyHasher {
    fn new(hash: BodyHash) -> KeyHasher {
        match hash {
            BodyHash::Sha256 => KeyHasher::Sha256(Sha256::new()),
            BodyHash::Blake3 => KeyHasher::Blake3(Box::new(blake3::Hasher::new())),
        }
    }

    fn update(&mut self, bytes: &[u8]) {
        match self {
            KeyHasher::Sha256(h) => h.update(bytes),
            KeyHasher::Blake3(h) => {
                h.update(bytes);
            }
        }
    }

    /// The fingerprint as [`RequestKey::body`] holds it.
    fn finish(self) -> String {
        match self {
            KeyHasher::Sha256(h) => hex(&h.finalize()),
            KeyHasher::Blake3(h) => format!("{BLAKE3_TAG}{}", h.finalize().to_hex()),
        }
    }
}

/// Build the exact-replay key of a request whose route knows no literal upload names
/// ([`request_key_with`]).
pub fn request_key(path: &str, query: &str, content_type: Option<&str>, body: &[u8]) -> RequestKey {
    request_key_with(path, query, content_type, body, &BTreeSet::new())
}

/// Build the exact-replay key of a request. `upload_names`: the route's literal upload names
/// (`Route::upload_names`), file-name stems whose whole file name keys an upload.
pub fn request_key_with(
    path: &str,
    query: &str,
    content_type: Option<&str>,
    body: &[u8],
    upload_names: &BTreeSet<String>,
) -> RequestKey {
    request_key_hashed(
        path,
        query,
        content_type,
        body,
        upload_names,
        BodyHash::default(),
    )
}

/// [`request_key_with`], the body fingerprinted with `hash` (the hash of the model looked up).
pub fn request_key_hashed(
    path: &str,
    query: &str,
    content_type: Option<&str>,
    body: &[u8],
    upload_names: &BTreeSet<String>,
    hash: BodyHash,
) -> RequestKey {
    RequestKey {
        path: path.to_string(),
        query: normalize_query(query),
        body: body_fingerprint_hashed(content_type, body, upload_names, hash),
    }
}

/// The fingerprint [`body_fingerprint_with`] gives a body that parses as the JSON `value`
/// (whatever its content type claims): its canonical text (keys sorted, compact) hashed after
/// a `json:` tag. The text is streamed into the hash, never built, so a caller holding the
/// parsed body pays neither a second parse nor a copy.
pub fn json_fingerprint(value: &serde_json::Value) -> String {
    json_fingerprint_hashed(value, BodyHash::default())
}

/// [`json_fingerprint`] made with `hash`.
pub fn json_fingerprint_hashed(value: &serde_json::Value, hash: BodyHash) -> String {
    let mut hasher = KeyHasher::new(hash);
    hasher.update(b"json:");
    hash_canonical(&mut hasher, value);
    hasher.finish()
}

/// Feed `value`'s canonical JSON text to `hasher`: what `sort_keys` then `to_string` would
/// write, object keys in byte order at every level.
fn hash_canonical(hasher: &mut KeyHasher, value: &serde_json::Value) {
    use serde_json::Value;
    match value {
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
            hasher.update(b"{");
            for (i, (k, v)) in entries.into_iter().enumerate() {
                if i > 0 {
                    hasher.update(b",");
                }
                hash_leaf(hasher, k);
                hasher.update(b":");
                hash_canonical(hasher, v);
            }
            hasher.update(b"}");
        }
        Value::Array(items) => {
            hasher.update(b"[");
            for (i, v) in items.iter().enumerate() {
                if i > 0 {
                    hasher.update(b",");
                }
                hash_canonical(hasher, v);
            }
            hasher.update(b"]");
        }
        leaf => hash_leaf(hasher, leaf),
    }
}

/// A string or scalar written as serde_json writes it (escapes, number forms), into the hash.
fn hash_leaf<T: serde::Serialize + ?Sized>(hasher: &mut KeyHasher, leaf: &T) {
    struct Into<'h>(&'h mut KeyHasher);
    impl std::io::Write for Into<'_> {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.update(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    // Writing a string or a scalar into memory cannot fail.
    let _ = serde_json::to_writer(Into(hasher), leaf);
}

/// A request path segment percent-decoded, as the twin names what it holds (a path
/// parameter's value, an id). Bytes that do not decode to UTF-8 (`%FF%FE`) keep the segment as
/// it was sent: decoding them lossily would give `%FF%FE` and `%FE%FF` one name.
pub fn decode_path_segment(seg: &str) -> String {
    match percent_encoding::percent_decode_str(seg).decode_utf8() {
        Ok(decoded) => decoded.into_owned(),
        Err(_) => seg.to_string(),
    }
}

/// A recorded path segment as a route template's literal. A template spells a parameter
/// `:name`, so a segment a client sent starting with `:` (a template it forgot to fill in,
/// `/v1/:me`) is written `%3A…`: kept as it is, it would read as a parameter and make the
/// route answer every path of its shape. [`escape_request_path`] spells a request the same
/// way before it is matched against templates.
pub fn escape_literal_segment(seg: &str) -> std::borrow::Cow<'_, str> {
    match seg.strip_prefix(':') {
        Some(rest) => std::borrow::Cow::Owned(format!("%3A{rest}")),
        None => std::borrow::Cow::Borrowed(seg),
    }
}

/// A request path with every segment spelled as a template literal
/// ([`escape_literal_segment`]), to be matched against route templates. Borrowed when no
/// segment starts with `:`, the common case.
pub fn escape_request_path(path: &str) -> std::borrow::Cow<'_, str> {
    if !path.contains("/:") {
        return std::borrow::Cow::Borrowed(path);
    }
    let escaped: Vec<std::borrow::Cow<'_, str>> =
        path.split('/').map(escape_literal_segment).collect();
    std::borrow::Cow::Owned(escaped.join("/"))
}

/// Sort query parameters by name (stable, values kept in order) and re-encode them, so that
/// `b=1&a=2` and `a=2&b=1` key the same. `""` stays `""`. Credential parameters (`?api_key=…`,
/// `?key=…`, `?sig=…`: [`crate::secret_names::is_secret_param_name`], the scrubber's rule)
/// are left out: recordings hold them tokenized, and the twin validates no credential, so a
/// client's own key is the recorded request as much as the recorded key is.
pub fn normalize_query(query: &str) -> String {
    if query.is_empty() {
        return String::new();
    }
    let mut pairs: Vec<(String, String)> = form_urlencoded::parse(query.as_bytes())
        .filter(|(k, _)| !crate::secret_names::is_secret_param_name(k))
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect();
    pairs.sort_by(|a, b| a.0.cmp(&b.0));
    form_urlencoded::Serializer::new(String::new())
        .extend_pairs(pairs)
        .finish()
}

/// The fingerprint of the normalized body (`b3:` and its hex BLAKE3 digest), `None` for an
/// empty body.
///
/// Normalization: JSON bodies are re-serialized with sorted keys; form bodies have their fields
/// sorted by name; multipart bodies are reduced to their parts (name, filename, bytes) sorted by
/// name, so a fresh boundary does not change the key; of a file part's filename only the
/// extension counts, since clients commonly generate upload names (timestamps, random
/// suffixes) while the bytes identify the file; anything else is hashed as is.
pub fn body_fingerprint(content_type: Option<&str>, body: &[u8]) -> Option<String> {
    body_fingerprint_with(content_type, body, &BTreeSet::new())
}

/// [`body_fingerprint`], where a file part whose name's stem is one of `upload_names` (a name
/// the client chose, not generated: see `Route::upload_names`) is keyed by its whole name.
pub fn body_fingerprint_with(
    content_type: Option<&str>,
    body: &[u8],
    upload_names: &BTreeSet<String>,
) -> Option<String> {
    body_fingerprint_hashed(content_type, body, upload_names, BodyHash::default())
}

/// [`body_fingerprint_with`] made with `hash`.
pub fn body_fingerprint_hashed(
    content_type: Option<&str>,
    body: &[u8],
    upload_names: &BTreeSet<String>,
    hash: BodyHash,
) -> Option<String> {
    if body.is_empty() {
        return None;
    }
    if let Ok(v) = serde_json::from_slice::<serde_json::Value>(body) {
        return Some(json_fingerprint_hashed(&v, hash));
    }
    let ct = content_type.unwrap_or("").to_ascii_lowercase();
    let mut hasher = KeyHasher::new(hash);
    if ct.starts_with("multipart/form-data") {
        // The parts borrow the upload's bytes (uploads run to megabytes): sorting borrowed
        // slices orders them exactly as sorting copies would.
        match multipart_parts_borrowed(&ct, content_type.unwrap_or(""), body) {
            Some(mut parts) => {
                parts.sort();
                hasher.update(b"multipart:");
                for (name, filename, data) in parts {
                    let filename = filename_kind(&filename, upload_names);
                    hasher.update(&(name.len() as u64).to_le_bytes());
                    hasher.update(name.as_bytes());
                    hasher.update(&(filename.len() as u64).to_le_bytes());
                    hasher.update(filename.as_bytes());
                    hasher.update(&(data.len() as u64).to_le_bytes());
                    hasher.update(data);
                }
            }
            None => {
                hasher.update(b"raw:");
                hasher.update(body);
            }
        }
    } else if ct.starts_with("application/x-www-form-urlencoded") {
        let mut pairs: Vec<(String, String)> = form_urlencoded::parse(body)
            .map(|(k, v)| (k.into_owned(), v.into_owned()))
            .collect();
        pairs.sort();
        hasher.update(b"form:");
        hasher.update(
            form_urlencoded::Serializer::new(String::new())
                .extend_pairs(pairs)
                .finish()
                .as_bytes(),
        );
    } else {
        hasher.update(b"raw:");
        hasher.update(body);
    }
    Some(hasher.finish())
}

/// What of an upload's filename keys the request: its lowercased extension (`""` without),
/// or, when its stem is a literal upload name, the whole name after a NUL (which no extension
/// holds, so the two kinds never key alike).
fn filename_kind(filename: &str, upload_names: &BTreeSet<String>) -> String {
    if !filename.is_empty() && upload_names.contains(upload_stem(filename)) {
        return format!("\0{filename}");
    }
    match filename.rsplit_once('.') {
        Some((stem, ext)) if !stem.is_empty() => ext.to_ascii_lowercase(),
        _ => String::new(),
    }
}

/// An upload's file name without its extension (`only-media` of `only-media.jpg`; a name
/// without a dot, or with only a leading one, is its own stem).
pub fn upload_stem(filename: &str) -> &str {
    match filename.rsplit_once('.') {
        Some((stem, _)) if !stem.is_empty() => stem,
        _ => filename,
    }
}

/// The stems ([`upload_stem`]) of the file parts of a `multipart/form-data` body, in body
/// order; empty for any other body or one that does not parse.
pub fn upload_stems(content_type: Option<&str>, body: &[u8]) -> Vec<String> {
    let raw = content_type.unwrap_or("");
    let ct = raw.to_ascii_lowercase();
    if !ct.starts_with("multipart/form-data") {
        return Vec::new();
    }
    multipart_parts_borrowed(&ct, raw, body)
        .map(|parts| {
            parts
                .into_iter()
                .filter(|(_, filename, _)| !filename.is_empty())
                .map(|(_, filename, _)| upload_stem(&filename).to_string())
                .collect()
        })
        .unwrap_or_default()
}

/// Lowercase hex of `bytes`.
pub fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(DIGITS[(b >> 4) as usize] as char);
        s.push(DIGITS[(b & 0xf) as usize] as char);
    }
    s
}

type Part = (String, String, Vec<u8>);

/// Split a multipart body into (name, filename, content) parts. `None` when it does not parse.
pub fn multipart_parts(ct_lower: &str, ct_raw: &str, body: &[u8]) -> Option<Vec<Part>> {
    multipart_parts_borrowed(ct_lower, ct_raw, body).map(|parts| {
        parts
            .into_iter()
            .map(|(name, filename, data)| (name, filename, data.to_vec()))
            .collect()
    })
}

/// The parts of a `multipart/form-data` body (`content_type` as sent: the boundary is
/// case-sensitive) as (name, filename, where the part's content lies in `body`), in body
/// order, split exactly as the request key splits them. `None` when it does not parse. A
/// rewrite that replaces some parts' contents in place (the engine's counterpart requests)
/// keeps every other byte, so the rewritten body keys as the original would with those
/// contents.
pub fn multipart_part_spans(
    content_type: &str,
    body: &[u8],
) -> Option<Vec<(String, String, std::ops::Range<usize>)>> {
    let ct = content_type.to_ascii_lowercase();
    let parts = multipart_parts_borrowed(&ct, content_type, body)?;
    // Each content is a subslice of `body`: its offset is the distance between the pointers.
    let base = body.as_ptr() as usize;
    Some(
        parts
            .into_iter()
            .map(|(name, filename, data)| {
                let start = (data.as_ptr() as usize).saturating_sub(base);
                (name, filename, start..start + data.len())
            })
            .collect(),
    )
}

/// One part of a `multipart/form-data` body, its content borrowed from the body.
struct RawPart<'b> {
    name: String,
    filename: String,
    /// The part's own `Content-Type`, lowercased, parameters cut (`image/jpeg`); empty when
    /// the part declares none.
    media_type: String,
    data: &'b [u8],
}

/// [`multipart_parts`] with each part's content borrowed from `body`.
fn multipart_parts_borrowed<'b>(
    ct_lower: &str,
    ct_raw: &str,
    body: &'b [u8],
) -> Option<Vec<(String, String, &'b [u8])>> {
    raw_parts(ct_lower, ct_raw, body).map(|parts| {
        parts
            .into_iter()
            .map(|p| (p.name, p.filename, p.data))
            .collect()
    })
}

/// The file parts (those with a `filename`) of a `multipart/form-data` body as (part name,
/// declared media type), in body order; parts that declare no `Content-Type` are left out,
/// as is every part of any other body or of one that does not parse. What a server decides
/// by the kind of file it was sent (a video answered `202` while it is processed, an image
/// `200`) is told apart by these.
pub fn upload_media_types(content_type: Option<&str>, body: &[u8]) -> Vec<(String, String)> {
    let raw = content_type.unwrap_or("");
    let ct = raw.to_ascii_lowercase();
    if !ct.starts_with("multipart/form-data") {
        return Vec::new();
    }
    raw_parts(&ct, raw, body)
        .map(|parts| {
            parts
                .into_iter()
                .filter(|p| !p.filename.is_empty() && !p.media_type.is_empty())
                .map(|p| (p.name, p.media_type))
                .collect()
        })
        .unwrap_or_default()
}

fn raw_parts<'b>(ct_lower: &str, ct_raw: &str, body: &'b [u8]) -> Option<Vec<RawPart<'b>>> {
    let at = ct_lower.find("boundary=")?;
    let boundary = ct_raw.get(at + "boundary=".len()..)?;
    let boundary = boundary.split(';').next()?.trim().trim_matches('"');
    if boundary.is_empty() {
        return None;
    }
    let delim = format!("--{boundary}").into_bytes();
    let mut parts = Vec::new();
    let mut rest = body;
    // Skip the preamble up to the first delimiter.
    let first = find(rest, &delim)?;
    rest = &rest[first + delim.len()..];
    loop {
        if rest.starts_with(b"--") {
            break;
        }
        let rest_trim = rest.strip_prefix(b"\r\n").unwrap_or(rest);
        let next = find(rest_trim, &delim)?;
        let part = &rest_trim[..next];
        let part = part.strip_suffix(b"\r\n").unwrap_or(part);
        let header_end = find(part, b"\r\n\r\n")?;
        let headers = String::from_utf8_lossy(&part[..header_end]);
        let data = &part[header_end + 4..];
        let mut name = String::new();
        let mut filename = String::new();
        let mut media_type = String::new();
        for line in headers.lines() {
            let Some((key, value)) = line.split_once(':') else {
                continue;
            };
            let key = key.trim();
            if key.eq_ignore_ascii_case("content-disposition") {
                name = disposition_param(line, "name").unwrap_or_default();
                filename = disposition_param(line, "filename").unwrap_or_default();
            } else if key.eq_ignore_ascii_case("content-type") {
                let essence = value.split(';').next().unwrap_or("");
                media_type = essence.trim().to_ascii_lowercase();
            }
        }
        parts.push(RawPart {
            name,
            filename,
            media_type,
            data,
        });
        rest = &rest_trim[next + delim.len()..];
    }
    Some(parts)
}

fn disposition_param(line: &str, key: &str) -> Option<String> {
    for piece in line.split(';') {
        let piece = piece.trim();
        if let Some((k, v)) = piece.split_once('=')
            && k.trim().eq_ignore_ascii_case(key)
        {
            return Some(v.trim().trim_matches('"').to_string());
        }
    }
    None
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    if needle.is_empty() {
        return None;
    }
    // Uploads run to megabytes: a SIMD substring search, not a window-by-window compare.
    memchr::memmem::find(hay, needle)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn a_colon_led_segment_is_spelled_percent_encoded_as_a_literal() {
        assert_eq!(escape_literal_segment(":me"), "%3Ame");
        assert_eq!(escape_literal_segment(":"), "%3A");
        assert_eq!(escape_literal_segment("items"), "items");
        assert_eq!(escape_literal_segment("a:b"), "a:b");
        assert_eq!(escape_request_path("/v1/:me/x/:y"), "/v1/%3Ame/x/%3Ay");
        assert!(matches!(
            escape_request_path("/v1/a:b"),
            std::borrow::Cow::Borrowed(_)
        ));
    }

    /// The stored fingerprints' JSON format: the canonical text (keys sorted, compact) hashed
    /// after a `json:` tag, as the streaming hash must keep writing it; BLAKE3 after `b3:`,
    /// SHA-256 bare, as models synthesized before BLAKE3 keys hold them.
    fn fingerprint_as_text(v: &serde_json::Value, hash: BodyHash) -> String {
        let mut v = v.clone();
        crate::canonical::sort_keys(&mut v);
        let text = format!("json:{v}");
        match hash {
            BodyHash::Blake3 => format!("b3:{}", blake3::hash(text.as_bytes()).to_hex()),
            BodyHash::Sha256 => hex(&Sha256::digest(text.as_bytes())),
        }
    }

    fn any_json() -> impl Strategy<Value = serde_json::Value> {
        let leaf = prop_oneof![
            Just(serde_json::Value::Null),
            any::<bool>().prop_map(serde_json::Value::from),
            any::<i64>().prop_map(serde_json::Value::from),
            any::<u64>().prop_map(serde_json::Value::from),
            (-1e12f64..1e12).prop_map(serde_json::Value::from),
            "\\PC*".prop_map(serde_json::Value::from),
            "[\"\\\\\u{0}-\u{1f}\u{7f}\u{2028}é😀a-z]{0,8}".prop_map(serde_json::Value::from),
        ];
        leaf.prop_recursive(4, 48, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..6).prop_map(serde_json::Value::Array),
                prop::collection::vec(("[a-zA-Z_\"é0-9]{0,6}", inner), 0..6)
                    .prop_map(|kv| serde_json::Value::Object(kv.into_iter().collect())),
            ]
        })
    }

    proptest! {
        #[test]
        fn a_json_fingerprint_hashes_the_canonical_text_of_the_body(v in any_json()) {
            prop_assert_eq!(json_fingerprint(&v), fingerprint_as_text(&v, BodyHash::Blake3));
            prop_assert_eq!(
                json_fingerprint_hashed(&v, BodyHash::Sha256),
                fingerprint_as_text(&v, BodyHash::Sha256)
            );
            let text = v.to_string();
            for hash in [BodyHash::Blake3, BodyHash::Sha256] {
                prop_assert_eq!(
                    body_fingerprint_hashed(
                        Some("application/json"),
                        text.as_bytes(),
                        &BTreeSet::new(),
                        hash
                    ),
                    Some(fingerprint_as_text(&v, hash))
                );
            }
        }
    }

    #[test]
    fn a_path_segment_that_does_not_decode_to_utf8_keeps_its_spelling() {
        assert_eq!(decode_path_segment("caf%C3%A9"), "caf\u{e9}");
        assert_eq!(decode_path_segment("a+b%20c"), "a+b c");
        assert_eq!(decode_path_segment("%FF%FE"), "%FF%FE");
        assert_ne!(decode_path_segment("%FF%FE"), decode_path_segment("%FE%FF"));
        assert_eq!(decode_path_segment("plain"), "plain");
    }

    #[test]
    fn query_order_does_not_change_the_key() {
        assert_eq!(normalize_query("b=1&a=2"), normalize_query("a=2&b=1"));
        assert_eq!(normalize_query(""), "");
    }

    #[test]
    fn credential_parameters_do_not_key_the_request() {
        let recorded = normalize_query("api_key=wraith_tok_x&city=oslo");
        assert_eq!(recorded, "city=oslo");
        assert_eq!(normalize_query("city=oslo&API_KEY=my-own-key"), recorded);
        assert_eq!(normalize_query("access_token=t&token=u"), "");
        // A name that merely contains one is an input.
        assert_eq!(normalize_query("page_token=p2"), "page_token=p2");
    }

    #[test]
    fn json_key_order_does_not_change_the_fingerprint() {
        let a = body_fingerprint(Some("application/json"), br#"{"a":1,"b":2}"#);
        let b = body_fingerprint(Some("application/json"), br#"{ "b": 2, "a": 1 }"#);
        assert_eq!(a, b);
        assert!(a.is_some());
        assert_eq!(body_fingerprint(None, b""), None);
    }

    #[test]
    fn multipart_part_spans_locate_each_parts_content_in_the_body() {
        let body = b"--B\r\nContent-Disposition: form-data; name=\"status\"\r\n\r\nhi\r\n--B\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.png\"\r\nContent-Type: image/png\r\n\r\nPNG\r\n--B--\r\n";
        let spans =
            multipart_part_spans("multipart/form-data; boundary=B", body).unwrap_or_default();
        let read: Vec<(&str, &str, &[u8])> = spans
            .iter()
            .map(|(n, f, r)| (n.as_str(), f.as_str(), &body[r.clone()]))
            .collect();
        assert_eq!(
            read,
            vec![("status", "", &b"hi"[..]), ("file", "a.png", &b"PNG"[..])]
        );
        assert_eq!(
            multipart_part_spans("multipart/form-data; boundary=b", body),
            None
        );
    }

    #[test]
    fn multipart_boundary_does_not_change_the_fingerprint() {
        let body = |b: &str| {
            format!(
                "--{b}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.png\"\r\nContent-Type: image/png\r\n\r\nPNGDATA\r\n--{b}\r\nContent-Disposition: form-data; name=\"description\"\r\n\r\nhello\r\n--{b}--\r\n"
            )
        };
        let a = body_fingerprint(
            Some("multipart/form-data; boundary=abc"),
            body("abc").as_bytes(),
        );
        let b = body_fingerprint(
            Some("multipart/form-data; boundary=xyz123"),
            body("xyz123").as_bytes(),
        );
        assert_eq!(a, b);
    }

    /// The stored fingerprints' format: the parts sorted by (name, filename, bytes), each hashed
    /// as length-prefixed name, filename extension and content after a `multipart:` tag.
    #[test]
    fn multipart_fingerprint_hashes_sorted_length_prefixed_parts() {
        let body = "--b\r\nContent-Disposition: form-data; name=\"z\"\r\n\r\nlast\r\n--b\r\nContent-Disposition: form-data; name=\"file\"; filename=\"up_1.PNG\"\r\n\r\nPNG\r\n\nDATA\r\n--b--\r\n";
        let mut hashed = b"multipart:".to_vec();
        for (name, ext, data) in [("file", "png", &b"PNG\r\n\nDATA"[..]), ("z", "", b"last")] {
            hashed.extend((name.len() as u64).to_le_bytes());
            hashed.extend(name.as_bytes());
            hashed.extend((ext.len() as u64).to_le_bytes());
            hashed.extend(ext.as_bytes());
            hashed.extend((data.len() as u64).to_le_bytes());
            hashed.extend(data);
        }
        let ct = Some("multipart/form-data; boundary=b");
        assert_eq!(
            body_fingerprint(ct, body.as_bytes()),
            Some(format!("b3:{}", blake3::hash(&hashed).to_hex()))
        );
        assert_eq!(
            body_fingerprint_hashed(ct, body.as_bytes(), &BTreeSet::new(), BodyHash::Sha256),
            Some(hex(&Sha256::digest(&hashed)))
        );
    }

    #[test]
    fn upload_media_types_name_each_file_parts_declared_type() {
        let body = "--b\r\nContent-Disposition: form-data; name=\"file\"; filename=\"v.mp4\"\r\ncontent-type: Video/MP4; codecs=avc1\r\n\r\nMP4\r\n--b\r\nContent-Disposition: form-data; name=\"thumbnail\"; filename=\"t.jpg\"\r\n\r\nJPEG\r\n--b\r\nContent-Disposition: form-data; name=\"description\"\r\nContent-Type: text/plain\r\n\r\nhi\r\n--b--\r\n";
        assert_eq!(
            upload_media_types(Some("multipart/form-data; boundary=b"), body.as_bytes()),
            vec![("file".to_string(), "video/mp4".to_string())],
            "a file part without a declared type and a text part are left out"
        );
        assert!(upload_media_types(Some("application/json"), body.as_bytes()).is_empty());
        assert!(upload_media_types(Some("multipart/form-data; boundary=zz"), b"junk").is_empty());
    }

    #[test]
    fn generated_upload_filenames_do_not_change_the_fingerprint() {
        let body = |name: &str, data: &str| {
            format!(
                "--b\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{name}\"\r\nContent-Type: image/jpeg\r\n\r\n{data}\r\n--b--\r\n"
            )
        };
        let ct = Some("multipart/form-data; boundary=b");
        let fp = |name: &str, data: &str| body_fingerprint(ct, body(name, data).as_bytes());
        assert_eq!(
            fp("upload_1760.12_9f2c.jpg", "JPEG"),
            fp("upload_1795.98_65e7.jpg", "JPEG")
        );
        assert_ne!(
            fp("x.jpg", "JPEG"),
            fp("x.png", "JPEG"),
            "the kind of file counts"
        );
        assert_ne!(fp("x.jpg", "JPEG"), fp("x.jpg", "OTHER"), "the bytes count");
    }

    #[test]
    fn a_literal_upload_name_keys_the_upload_by_its_whole_name() {
        let body = |name: &str| {
            format!(
                "--b\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{name}\"\r\nContent-Type: image/jpeg\r\n\r\nJPEG\r\n--b--\r\n"
            )
        };
        let ct = Some("multipart/form-data; boundary=b");
        let names: BTreeSet<String> = ["only-media".to_string()].into();
        let fp = |name: &str| body_fingerprint_with(ct, body(name).as_bytes(), &names);
        assert_ne!(
            fp("only-media.jpg"),
            fp("other.jpg"),
            "a literal name counts"
        );
        assert_ne!(fp("only-media.jpg"), fp("only-media.png"));
        assert_eq!(
            fp("upload_1760.jpg"),
            fp("upload_1795.jpg"),
            "other names still key by extension only"
        );
        assert_eq!(
            fp("upload_1760.jpg"),
            body_fingerprint(ct, body("only-media.jpg").as_bytes()),
            "without literal names every upload keys by its extension"
        );
        assert_eq!(
            upload_stems(ct, body("only-media.tar.gz").as_bytes()),
            vec!["only-media.tar".to_string()]
        );
        assert!(upload_stems(Some("application/json"), b"{}").is_empty());
        assert_eq!(upload_stem(".env"), ".env");
    }
}
