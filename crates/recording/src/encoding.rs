//! Content codings of recorded bodies, requests' and responses' alike.
//!
//! Recordings hold plain bodies: the scrubber must see (and remove) secrets inside them and synth
//! must read them. `wraith record` asks the upstream for `identity`, but some upstreams compress
//! anyway, and a client may send its request body compressed (`Content-Encoding` on the
//! request). [`decode_message_body`] turns such a body back into the bytes it encodes and drops
//! the `content-encoding` header that described it; the recorder calls it on both bodies before
//! scrubbing, and [`decoded_exchange`] (or [`decode_sessions`]) gives readers (synth, check) the
//! same view of recordings made before it did.
//!
//! Decoded: `gzip` and `x-gzip` (one or more gzip members), `deflate` (zlib-wrapped, as
//! RFC 9110 says, or raw deflate, as some servers send), `br` (Brotli, what browsers and CDNs
//! send most) and `zstd`; `identity` is no coding. Anything else (`compress`, …), a body that does not decode, or one that decodes to more
//! than the caller's limit is kept exactly as it was, with its header.

use std::io::Read;

use crate::exchange::{Exchange, Frame, Headers, RecordedSession};

/// The largest decoded body readers accept by default (the recorder's default body limit).
pub const DEFAULT_MAX_DECODED_BYTES: usize = 64 * 1024 * 1024;

/// Why an encoded body was kept as it was.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    #[error(
        "content coding `{0}` is not supported (Wraith decodes gzip, x-gzip, deflate, br and zstd)"
    )]
    Unsupported(String),
    #[error("the body is not valid `{coding}` data: {reason}")]
    Corrupt { coding: String, reason: String },
    #[error("the body decodes to more than {limit} bytes")]
    TooLarge { limit: usize },
}

/// What [`decode_message_body`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decoding {
    /// No content coding (none, or only `identity`), or an empty body: nothing to do.
    Plain,
    /// The body was decoded and `content-encoding` removed; `codings` is the header's value.
    Decoded { codings: String },
    /// The body and its headers were kept as they were.
    Kept { codings: String, error: DecodeError },
}

/// The codings a `content-encoding` header lists, in the order they were applied, without
/// `identity` (lowercase).
pub fn content_codings(headers: &Headers) -> Vec<String> {
    headers
        .iter()
        .filter(|(name, _)| name.eq_ignore_ascii_case("content-encoding"))
        .flat_map(|(_, values)| values.iter())
        .flat_map(|v| v.split(','))
        .map(|c| c.trim().to_ascii_lowercase())
        .filter(|c| !c.is_empty() && c != "identity")
        .collect()
}

/// `body` with `codings` (in the order they were applied) undone. Fails without a partial
/// result: on an unsupported coding, data that does not decode, or more than `limit` decoded
/// bytes.
pub fn decode_body(codings: &[String], body: &[u8], limit: usize) -> Result<Vec<u8>, DecodeError> {
    // Support is checked before any work, so an unsupported outer coding costs nothing.
    if let Some(c) = codings.iter().find(|c| !is_supported(c)) {
        return Err(DecodeError::Unsupported(c.clone()));
    }
    let mut out = body.to_vec();
    for coding in codings.iter().rev() {
        out = decode_one(coding, &out, limit)?;
    }
    Ok(out)
}

fn is_supported(coding: &str) -> bool {
    matches!(coding, "gzip" | "x-gzip" | "deflate" | "br" | "zstd")
}

fn decode_one(coding: &str, body: &[u8], limit: usize) -> Result<Vec<u8>, DecodeError> {
    match coding {
        "gzip" | "x-gzip" => read_limited(coding, flate2::read::MultiGzDecoder::new(body), limit),
        // RFC 9110 says zlib; some servers send raw deflate. A zlib stream starts with a header
        // whose checksum a raw stream almost never passes, so zlib is tried first.
        "deflate" => {
            read_limited(coding, flate2::read::ZlibDecoder::new(body), limit).or_else(|zlib_err| {
                match read_limited(coding, flate2::read::DeflateDecoder::new(body), limit) {
                    Ok(out) => Ok(out),
                    Err(DecodeError::TooLarge { limit }) => Err(DecodeError::TooLarge { limit }),
                    Err(_) => Err(zlib_err),
                }
            })
        }
        // The reader's buffer size only sets how much compressed input it reads at a time.
        "br" => read_limited(
            coding,
            brotli_decompressor::Decompressor::new(body, 4096),
            limit,
        ),
        "zstd" => {
            let decoder =
                zstd::stream::read::Decoder::new(body).map_err(|e| corrupt(coding, &e))?;
            read_limited(coding, decoder, limit)
        }
        other => Err(DecodeError::Unsupported(other.to_string())),
    }
}

fn corrupt(coding: &str, e: &std::io::Error) -> DecodeError {
    DecodeError::Corrupt {
        coding: coding.to_string(),
        reason: e.to_string(),
    }
}

/// Read `reader` to its end, failing past `limit` bytes.
fn read_limited(coding: &str, reader: impl Read, limit: usize) -> Result<Vec<u8>, DecodeError> {
    let mut out = Vec::new();
    let cap = u64::try_from(limit).unwrap_or(u64::MAX).saturating_add(1);
    reader
        .take(cap)
        .read_to_end(&mut out)
        .map_err(|e| corrupt(coding, &e))?;
    if out.len() > limit {
        return Err(DecodeError::TooLarge { limit });
    }
    Ok(out)
}

/// Decode a request or response body its headers say is encoded, in place: on success `body`
/// holds the decoded bytes, `content-encoding` is removed and a `content-length` header is set to
/// the decoded length. Otherwise nothing changes ([`Decoding::Kept`] says why).
pub fn decode_message_body(headers: &mut Headers, body: &mut Vec<u8>, limit: usize) -> Decoding {
    let codings = content_codings(headers);
    if codings.is_empty() || body.is_empty() {
        return Decoding::Plain;
    }
    let listed = codings.join(", ");
    match decode_body(&codings, body, limit) {
        Ok(decoded) => {
            *body = decoded;
            headers.retain(|name, _| !name.eq_ignore_ascii_case("content-encoding"));
            for (name, values) in headers.iter_mut() {
                if name.eq_ignore_ascii_case("content-length") {
                    *values = vec![body.len().to_string()];
                }
            }
            Decoding::Decoded { codings: listed }
        }
        Err(error) => Decoding::Kept {
            codings: listed,
            error,
        },
    }
}

/// `ex` with its request and response bodies decoded as [`decode_message_body`] does, for
/// recordings made before the recorder decoded them: `None` when there is nothing to decode or
/// nothing decodes (the exchange is then read as it is). The server frames of a decoded response
/// become one frame, stamped with the first one's time, where the first one was.
pub fn decoded_exchange(ex: &Exchange, limit: usize) -> Option<Exchange> {
    let mut out: Option<Exchange> = None;
    if !content_codings(&ex.request.headers).is_empty() {
        let mut headers = ex.request.headers.clone();
        let mut body = ex.request.body.to_vec();
        if let Decoding::Decoded { .. } = decode_message_body(&mut headers, &mut body, limit) {
            let decoded = out.get_or_insert_with(|| ex.clone());
            decoded.request.headers = headers;
            decoded.request.body = body.into();
        }
    }
    let first = ex.frames.iter().position(|f| f.direction == "server");
    if let Some(first) = first
        && !content_codings(&ex.response.headers).is_empty()
    {
        let mut headers = ex.response.headers.clone();
        let mut body = ex.response_body();
        if let Decoding::Decoded { .. } = decode_message_body(&mut headers, &mut body, limit) {
            let decoded = out.get_or_insert_with(|| ex.clone());
            decoded.response.headers = headers;
            let timestamp_us = ex.frames[first].timestamp_us;
            decoded.frames.retain(|f| f.direction != "server");
            decoded.frames.insert(
                first,
                Frame {
                    direction: "server".to_string(),
                    timestamp_us,
                    body,
                    frame_type: "data".to_string(),
                },
            );
        }
    }
    out
}

/// Every exchange of `sessions` read as [`decoded_exchange`] reads it, in place: for a reader
/// that compares against recorded bodies (`wraith check`) and must see what synth saw.
pub fn decode_sessions(sessions: &mut [RecordedSession], limit: usize) {
    for session in sessions {
        for ex in &mut session.exchanges {
            if let Some(decoded) = decoded_exchange(ex, limit) {
                *ex = decoded;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;

    const JSON: &[u8] = br#"{"id":1,"name":"gzip me"}"#;

    fn gzip(data: &[u8]) -> Vec<u8> {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        e.write_all(data).unwrap();
        e.finish().unwrap()
    }

    fn zlib(data: &[u8]) -> Vec<u8> {
        let mut e = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
        e.write_all(data).unwrap();
        e.finish().unwrap()
    }

    fn raw_deflate(data: &[u8]) -> Vec<u8> {
        let mut e = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::default());
        e.write_all(data).unwrap();
        e.finish().unwrap()
    }

    fn headers(pairs: &[(&str, &str)]) -> Headers {
        let mut h = Headers::new();
        for (k, v) in pairs {
            h.entry((*k).to_string())
                .or_default()
                .push((*v).to_string());
        }
        h
    }

    fn brotli(data: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        let mut w = brotli::CompressorWriter::new(&mut out, 4096, 9, 22);
        w.write_all(data).unwrap();
        drop(w);
        out
    }

    fn codings(list: &[&str]) -> Vec<String> {
        list.iter().map(|c| (*c).to_string()).collect()
    }

    #[test]
    fn gzip_x_gzip_zlib_raw_deflate_brotli_and_zstd_decode() {
        let limit = DEFAULT_MAX_DECODED_BYTES;
        assert_eq!(
            decode_body(&codings(&["gzip"]), &gzip(JSON), limit),
            Ok(JSON.to_vec())
        );
        assert_eq!(
            decode_body(&codings(&["x-gzip"]), &gzip(JSON), limit),
            Ok(JSON.to_vec())
        );
        assert_eq!(
            decode_body(&codings(&["deflate"]), &zlib(JSON), limit),
            Ok(JSON.to_vec())
        );
        assert_eq!(
            decode_body(&codings(&["deflate"]), &raw_deflate(JSON), limit),
            Ok(JSON.to_vec())
        );
        let z = zstd::stream::encode_all(JSON, 3).unwrap();
        assert_eq!(
            decode_body(&codings(&["zstd"]), &z, limit),
            Ok(JSON.to_vec())
        );
        assert_eq!(
            decode_body(&codings(&["br"]), &brotli(JSON), limit),
            Ok(JSON.to_vec())
        );
        // Two members (a concatenated gzip stream) are one body.
        let mut two = gzip(b"{\"a\":");
        two.extend(gzip(b"1}"));
        assert_eq!(
            decode_body(&codings(&["gzip"]), &two, limit),
            Ok(b"{\"a\":1}".to_vec())
        );
        // Stacked codings are undone last first.
        assert_eq!(
            decode_body(&codings(&["deflate", "gzip"]), &gzip(&zlib(JSON)), limit),
            Ok(JSON.to_vec())
        );
    }

    #[test]
    fn garbage_unsupported_and_oversized_bodies_are_refused() {
        let limit = DEFAULT_MAX_DECODED_BYTES;
        for coding in ["gzip", "deflate", "br", "zstd"] {
            let err = decode_body(&codings(&[coding]), b"not compressed at all", limit);
            assert!(
                matches!(err, Err(DecodeError::Corrupt { .. })),
                "{coding}: {err:?}"
            );
        }
        // A cut gzip stream does not decode to part of the body.
        let cut = gzip(JSON);
        let err = decode_body(&codings(&["gzip"]), &cut[..cut.len() - 6], limit);
        assert!(matches!(err, Err(DecodeError::Corrupt { .. })), "{err:?}");
        assert_eq!(
            decode_body(&codings(&["compress"]), b"\x1f\x9d\x90{", limit),
            Err(DecodeError::Unsupported("compress".into()))
        );
        // A cut Brotli stream does not decode to part of the body either.
        let cut = brotli(JSON);
        let err = decode_body(&codings(&["br"]), &cut[..cut.len() - 3], limit);
        assert!(matches!(err, Err(DecodeError::Corrupt { .. })), "{err:?}");
        assert_eq!(
            decode_body(&codings(&["br"]), &brotli(&[b'x'; 1000]), 999),
            Err(DecodeError::TooLarge { limit: 999 })
        );
        assert_eq!(
            decode_body(&codings(&["gzip"]), &gzip(&[b'x'; 1000]), 999),
            Err(DecodeError::TooLarge { limit: 999 })
        );
        assert_eq!(
            decode_body(&codings(&["gzip"]), &gzip(&[b'x'; 1000]), 1000),
            Ok(vec![b'x'; 1000])
        );
    }

    #[test]
    fn a_decoded_body_loses_its_content_encoding_and_gets_its_length() {
        let mut h = headers(&[
            ("content-encoding", "gzip"),
            ("content-length", "999"),
            ("content-type", "application/json"),
        ]);
        let mut body = gzip(JSON);
        let got = decode_message_body(&mut h, &mut body, DEFAULT_MAX_DECODED_BYTES);
        assert_eq!(
            got,
            Decoding::Decoded {
                codings: "gzip".into()
            }
        );
        assert_eq!(body, JSON);
        assert_eq!(
            h,
            headers(&[
                ("content-length", &JSON.len().to_string()),
                ("content-type", "application/json"),
            ])
        );
    }

    #[test]
    fn a_body_that_does_not_decode_is_kept_with_its_header() {
        for coding in ["gzip", "br"] {
            let before = headers(&[("content-encoding", coding), ("content-length", "5")]);
            let mut h = before.clone();
            let mut body = b"hello".to_vec();
            let got = decode_message_body(&mut h, &mut body, DEFAULT_MAX_DECODED_BYTES);
            assert!(matches!(got, Decoding::Kept { .. }), "{coding}: {got:?}");
            assert_eq!(body, b"hello");
            assert_eq!(h, before);
        }
    }

    #[test]
    fn identity_no_header_and_empty_bodies_are_plain() {
        for h in [
            headers(&[]),
            headers(&[("content-encoding", "identity")]),
            headers(&[("content-type", "text/plain")]),
        ] {
            let mut h2 = h.clone();
            let mut body = b"plain".to_vec();
            assert_eq!(
                decode_message_body(&mut h2, &mut body, DEFAULT_MAX_DECODED_BYTES),
                Decoding::Plain
            );
            assert_eq!((h2, body), (h, b"plain".to_vec()));
        }
        let mut h = headers(&[("content-encoding", "gzip")]);
        let mut body = Vec::new();
        assert_eq!(
            decode_message_body(&mut h, &mut body, DEFAULT_MAX_DECODED_BYTES),
            Decoding::Plain
        );
        assert_eq!(content_codings(&h), ["gzip"]);
    }

    #[test]
    fn an_encoded_recording_reads_as_one_decoded_frame() {
        let gz = gzip(JSON);
        let (a, b) = gz.split_at(gz.len() / 2);
        let frame = |t: u64, body: &[u8]| Frame {
            direction: "server".into(),
            timestamp_us: t,
            body: body.to_vec(),
            frame_type: "data".into(),
        };
        let ex = Exchange {
            protocol: "http".into(),
            request: crate::RecordedRequest {
                method: "GET".into(),
                path: "/x".into(),
                query: String::new(),
                headers: Headers::new(),
                body: Vec::new().into(),
                content_type: None,
                origin: None,
            },
            response: crate::RecordedResponse {
                status: 200,
                headers: headers(&[("content-encoding", "gzip")]),
                content_type: Some("application/json".into()),
                trailers: None,
            },
            frames: vec![frame(7, a), frame(9, b)],
            timing: Default::default(),
            correlation: Default::default(),
            safety: Default::default(),
            content: Default::default(),
            truncated: false,
        };
        let got = decoded_exchange(&ex, DEFAULT_MAX_DECODED_BYTES).unwrap();
        assert_eq!(got.frames, vec![frame(7, JSON)]);
        assert!(got.response.headers.is_empty());
        assert_eq!(got.request, ex.request);

        let mut plain = ex.clone();
        plain.response.headers = Headers::new();
        assert_eq!(decoded_exchange(&plain, DEFAULT_MAX_DECODED_BYTES), None);
        let mut garbage = ex.clone();
        garbage.frames = vec![frame(7, b"nope")];
        assert_eq!(decoded_exchange(&garbage, DEFAULT_MAX_DECODED_BYTES), None);
    }

    #[test]
    fn an_encoded_request_body_of_an_older_recording_reads_decoded() {
        let ex = Exchange {
            protocol: "http".into(),
            request: crate::RecordedRequest {
                method: "POST".into(),
                path: "/x".into(),
                query: String::new(),
                headers: headers(&[
                    ("content-encoding", "gzip"),
                    ("content-type", "application/json"),
                ]),
                body: gzip(JSON).into(),
                content_type: Some("application/json".into()),
                origin: None,
            },
            response: crate::RecordedResponse {
                status: 201,
                headers: headers(&[("content-type", "application/json")]),
                content_type: Some("application/json".into()),
                trailers: None,
            },
            frames: vec![Frame {
                direction: "server".into(),
                timestamp_us: 3,
                body: b"{}".to_vec(),
                frame_type: "data".into(),
            }],
            timing: Default::default(),
            correlation: Default::default(),
            safety: Default::default(),
            content: Default::default(),
            truncated: false,
        };
        let got = decoded_exchange(&ex, DEFAULT_MAX_DECODED_BYTES).unwrap();
        assert_eq!(got.request.body, JSON);
        assert_eq!(
            got.request.headers,
            headers(&[("content-type", "application/json")])
        );
        assert_eq!((&got.response, &got.frames), (&ex.response, &ex.frames));

        let mut unsupported = ex.clone();
        unsupported.request.headers = headers(&[("content-encoding", "compress")]);
        assert_eq!(
            decoded_exchange(&unsupported, DEFAULT_MAX_DECODED_BYTES),
            None
        );
    }

    #[test]
    fn codings_are_read_case_insensitively_from_every_value() {
        let h = headers(&[
            ("Content-Encoding", "GZIP, identity"),
            ("content-encoding", "br"),
        ]);
        assert_eq!(content_codings(&h), ["gzip", "br"]);
    }
}
