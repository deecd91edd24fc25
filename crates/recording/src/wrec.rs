//! The WREC codec: one exchange = one zstd frame holding one CBOR map.
//!
//! Encoding follows the field order of [`Exchange`] (which is the key order on disk), with
//! minimal-length CBOR and bodies as byte strings, so re-encoding a decoded file reproduces its
//! CBOR bytes exactly. zstd frames are written streaming (no content size in the header), like
//! the files Wraith has always written; decoding therefore must stream too.
//!
//! One limit, [`MAX_EXCHANGE_BYTES`], bounds the CBOR payload of one exchange file on both
//! sides: a reader stops decompressing at it (a small file that decompresses to gigabytes is
//! refused, not read whole), and a writer refuses an exchange past it, so every file Wraith
//! writes reads back.

use std::io::Read as _;

use crate::error::RecordingError;
use crate::exchange::Exchange;

/// zstd level for new files: small files, fast; the format does not depend on it.
const ZSTD_LEVEL: i32 = 3;

/// The most CBOR one exchange file may hold (its zstd frame decompressed): 1 GiB.
///
/// Readers stop decompressing here and refuse the file ([`RecordingError::DecodedTooLarge`]);
/// writers refuse an exchange whose payload is larger ([`RecordingError::ExchangeTooLarge`]), so
/// a file Wraith wrote is always readable again. It sits far above what Wraith records: the
/// recorder keeps at most 64 MiB of each body, and a HAR entry with a body of a few hundred MB
/// imports.
pub const MAX_EXCHANGE_BYTES: u64 = 1 << 30;

/// Decode one `.wrec.zst` file's bytes.
pub fn read_exchange(bytes: &[u8]) -> Result<Exchange, RecordingError> {
    decode_cbor(&decompress(bytes)?)
}

/// The CBOR payload of a `.wrec.zst` file (its zstd frame decompressed, streaming: the frames
/// carry no content size). A payload past [`MAX_EXCHANGE_BYTES`] is refused once that much is
/// decompressed, never read whole.
pub fn decompress(bytes: &[u8]) -> Result<Vec<u8>, RecordingError> {
    decompress_limited(bytes, MAX_EXCHANGE_BYTES)
}

/// [`decompress`] under a given limit: decompresses at most `limit + 1` bytes, and refuses the
/// file when there is that one byte more. The buffer grows by doubling up to `limit` bytes and
/// never past it (the byte more is read aside), so a refused file costs no more memory than
/// the largest one taken.
fn decompress_limited(bytes: &[u8], limit: u64) -> Result<Vec<u8>, RecordingError> {
    let zstd = |e: std::io::Error| RecordingError::Decode(format!("zstd: {e}"));
    let mut decoder = zstd::stream::read::Decoder::with_buffer(bytes).map_err(zstd)?;
    let limit_len = usize::try_from(limit).unwrap_or(usize::MAX);
    let mut out: Vec<u8> = Vec::new();
    let mut filled = 0;
    loop {
        if filled == out.len() && filled < limit_len {
            let grow = out.len().max(8 * 1024).min(limit_len - filled);
            out.reserve_exact(grow);
            out.resize(filled + grow, 0);
        }
        let read = if filled < limit_len {
            decoder.read(&mut out[filled..])
        } else {
            // At the limit: one byte more, read aside, and the file is refused.
            decoder.read(&mut [0u8; 1])
        };
        match read {
            Ok(0) => break,
            Ok(_) if filled >= limit_len => {
                return Err(RecordingError::DecodedTooLarge { limit });
            }
            Ok(n) => filled += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(zstd(e)),
        }
    }
    out.truncate(filled);
    Ok(out)
}

/// Decode the CBOR payload (already decompressed). An answer whose status is no HTTP status
/// (three digits, 100 to 999) is refused here: nothing could replay it; so is a request
/// method that is no HTTP token, a path not starting with `/`, a path or query holding a C0
/// control character or DEL, a header name that is no token or a header value holding CR, LF
/// or NUL ([`check_request_line_and_headers`]).
pub fn decode_cbor(cbor: &[u8]) -> Result<Exchange, RecordingError> {
    let mut rest = cbor;
    let ex: Exchange = ciborium::de::from_reader(&mut rest)
        .map_err(|e| RecordingError::Decode(format!("CBOR: {e}")))?;
    // One exchange per file: bytes after its map (a second frame appended, a file written
    // over another) mean the file is not what one write made.
    if !rest.is_empty() {
        return Err(RecordingError::Decode(format!(
            "{} byte(s) follow the exchange (a file holds exactly one: two files joined, or \
             one written over another)",
            rest.len()
        )));
    }
    if !(100..=999).contains(&ex.response.status) {
        return Err(RecordingError::Decode(format!(
            "response.status {} is not an HTTP status (100 to 999)",
            ex.response.status
        )));
    }
    check_request_line_and_headers(&ex).map_err(RecordingError::Decode)?;
    Ok(ex)
}

/// Whether `s` is an HTTP token (RFC 9110 §5.6.2): one or more of letters, digits and
/// ``!#$%&'*+-.^_`|~``.
fn is_token(s: &str) -> bool {
    !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

/// The fields no HTTP message could carry, which nothing could replay (a twin answering them,
/// or a check sending them, would fail or split a message): a method that is no token, a path
/// not starting with `/`, a path or query holding a C0 control or DEL, a header name that is no
/// token, a header value holding CR, LF or NUL. The message names the field.
fn check_request_line_and_headers(ex: &Exchange) -> Result<(), String> {
    let req = &ex.request;
    if !is_token(&req.method) {
        return Err(format!(
            "request.method \"{}\" is not an HTTP method (a token: letters, digits and \
             !#$%&'*+-.^_`|~)",
            req.method.escape_debug()
        ));
    }
    if !req.path.starts_with('/') {
        return Err(format!(
            "request.path \"{}\" does not start with `/`",
            req.path.escape_debug()
        ));
    }
    // No request line carries a C0 control or DEL (a client percent-encodes them), and in a
    // route name one would reach every printout. C1 controls are UTF-8 bytes a server takes,
    // so a recording may hold them: the printouts escape those.
    for (field, text) in [("request.path", &req.path), ("request.query", &req.query)] {
        if let Some((i, c)) = text.char_indices().find(|(_, c)| c.is_ascii_control()) {
            return Err(format!(
                "{field} \"{}\" has a control character (U+{:04X}) at byte {i}, which no request \
                 line carries; percent-encode it (%{:02X}) or remove the recording",
                text.escape_debug(),
                u32::from(c),
                u32::from(c)
            ));
        }
    }
    let lists = [
        ("request.headers", Some(&req.headers)),
        ("response.headers", Some(&ex.response.headers)),
        ("response.trailers", ex.response.trailers.as_ref()),
    ];
    for (field, headers) in lists {
        for (name, values) in headers.into_iter().flatten() {
            if !is_token(name) {
                return Err(format!(
                    "{field} has the name \"{}\", which is not a header name (a token: \
                     letters, digits and !#$%&'*+-.^_`|~)",
                    name.escape_debug()
                ));
            }
            if let Some(c) = values
                .iter()
                .flat_map(|v| v.chars())
                .find(|c| matches!(c, '\r' | '\n' | '\0'))
            {
                return Err(format!(
                    "{field}[\"{name}\"] holds {}, which no header value can carry",
                    c.escape_debug()
                ));
            }
        }
    }
    Ok(())
}

/// The CBOR payload of an exchange (before compression), whatever its size: files are made by
/// [`encode_exchange`], which holds them to [`MAX_EXCHANGE_BYTES`].
pub fn encode_cbor(ex: &Exchange) -> Vec<u8> {
    encode_cbor_into(ex, Vec::with_capacity(512 + ex.request.body.len()))
}

/// [`encode_cbor`] into `out` (empty, with the capacity the caller expects to need).
fn encode_cbor_into(ex: &Exchange, mut out: Vec<u8>) -> Vec<u8> {
    // Invariant, not input: every field of Exchange maps to CBOR and a Vec sink never fails.
    #[allow(clippy::expect_used)]
    ciborium::ser::into_writer(ex, &mut out).expect("CBOR encoding into a Vec cannot fail");
    out
}

/// How many bytes [`encode_cbor`] gives for `ex`, counted without building them.
pub fn cbor_len(ex: &Exchange) -> u64 {
    /// A sink that only counts what it is given.
    struct Count(u64);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 = self.0.saturating_add(buf.len() as u64);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    // Every field of Exchange maps to CBOR and the sink never fails: there is no error to see.
    let _ = ciborium::ser::into_writer(ex, &mut count);
    count.0
}

/// Encode an exchange as a complete `.wrec.zst` file. An exchange whose CBOR payload is larger
/// than [`MAX_EXCHANGE_BYTES`] is refused (no reader would take the file back).
pub fn encode_exchange(ex: &Exchange) -> Result<Vec<u8>, RecordingError> {
    encode_exchange_limited(ex, MAX_EXCHANGE_BYTES)
}

/// [`encode_exchange`] under a given limit; the payload is measured before it is built.
pub(crate) fn encode_exchange_limited(
    ex: &Exchange,
    limit: u64,
) -> Result<Vec<u8>, RecordingError> {
    let size = cbor_len(ex);
    if size > limit {
        return Err(RecordingError::ExchangeTooLarge {
            what: "the exchange".to_string(),
            size,
            limit,
        });
    }
    // `size` is at most `limit`, so it fits a usize wherever the limit does.
    let capacity = usize::try_from(size).unwrap_or(0);
    let cbor = encode_cbor_into(ex, Vec::with_capacity(capacity));
    // Streaming encode: no content size in the frame header, like existing files. Invariant:
    // an in-memory source and a Vec sink cannot fail.
    #[allow(clippy::expect_used)]
    Ok(zstd::stream::encode_all(&cbor[..], ZSTD_LEVEL).expect("zstd into a Vec cannot fail"))
}

/// `n` bytes as people read it: `1 GiB`, `64 MiB`, `512 KiB`, else `1000 bytes`.
pub(crate) fn human_bytes(n: u64) -> String {
    for (unit, size) in [("GiB", 1u64 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)] {
        if n >= size && n.is_multiple_of(size) {
            return format!("{} {unit}", n / size);
        }
    }
    format!("{n} bytes")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exchange::*;

    #[test]
    fn a_file_holding_two_exchanges_is_refused_as_damaged() {
        let one = encode_exchange(&sample()).unwrap();
        assert_eq!(read_exchange(&one).unwrap(), sample());
        // Two files joined: zstd reads both frames, the CBOR holds two maps.
        let mut two = one.clone();
        two.extend_from_slice(&one);
        let e = read_exchange(&two).unwrap_err().to_string();
        assert!(e.contains("follow the exchange"), "{e}");
        // Bytes after the map inside one frame.
        let mut cbor = encode_cbor(&sample());
        cbor.push(0);
        let e = decode_cbor(&cbor).unwrap_err().to_string();
        assert!(e.contains("1 byte(s) follow the exchange"), "{e}");
    }

    fn sample() -> Exchange {
        let mut headers = Headers::new();
        headers.insert("content-type".into(), vec!["application/json".into()]);
        Exchange {
            protocol: "http".into(),
            request: RecordedRequest {
                method: "POST".into(),
                path: "/a".into(),
                query: String::new(),
                headers: headers.clone(),
                body: b"{\"x\":1}".to_vec().into(),
                content_type: Some("application/json".into()),
                origin: None,
            },
            response: RecordedResponse {
                status: 201,
                headers,
                content_type: Some("application/json".into()),
                trailers: None,
            },
            frames: vec![Frame {
                direction: "server".into(),
                timestamp_us: 5,
                body: b"{}".to_vec(),
                frame_type: "data".into(),
            }],
            timing: Timing::default(),
            correlation: Correlation::default(),
            safety: Safety::default(),
            content: Content::default(),
            truncated: false,
        }
    }

    #[test]
    fn encode_then_read_round_trips() {
        let ex = sample();
        let bytes = encode_exchange(&ex).unwrap();
        assert_eq!(read_exchange(&bytes).unwrap(), ex);
    }

    #[test]
    fn bodies_are_cbor_byte_strings_and_origin_absent_when_none() {
        let cbor = encode_cbor(&sample());
        assert_eq!(cbor[0], 0xa9, "9-key map");
        let v: ciborium::Value = ciborium::de::from_reader(&cbor[..]).unwrap();
        let req = v.as_map().unwrap()[1].1.as_map().unwrap();
        assert!(req.iter().all(|(k, _)| k.as_text() != Some("origin")));
        let body = req
            .iter()
            .find(|(k, _)| k.as_text() == Some("body"))
            .unwrap();
        assert!(body.1.is_bytes());
    }

    #[test]
    fn an_answer_without_an_http_status_is_a_decode_error() {
        for status in [0, 99, 1000] {
            let mut ex = sample();
            ex.response.status = status;
            let e = read_exchange(&encode_exchange(&ex).unwrap())
                .unwrap_err()
                .to_string();
            assert!(e.contains(&format!("response.status {status}")), "{e}");
        }
        for status in [100, 599, 999] {
            let mut ex = sample();
            ex.response.status = status;
            assert!(read_exchange(&encode_exchange(&ex).unwrap()).is_ok());
        }
    }

    #[test]
    fn fields_no_http_message_could_carry_are_a_decode_error_naming_the_field() {
        let with = |edit: &dyn Fn(&mut Exchange)| {
            let mut ex = sample();
            edit(&mut ex);
            read_exchange(&encode_exchange(&ex).unwrap()).map_err(|e| e.to_string())
        };
        type Edit<'a> = &'a dyn Fn(&mut Exchange);
        let refused: [(Edit<'_>, &str); 11] = [
            (
                &|e| e.request.path = "/v1/\u{1b}[2Jitems".into(),
                "request.path \"/v1/\\u{1b}[2Jitems\" has a control character (U+001B) at byte 4",
            ),
            (
                &|e| e.request.query = "q=a\u{7f}".into(),
                "request.query \"q=a\\u{7f}\" has a control character (U+007F)",
            ),
            (
                &|e| e.request.method = "GE T".into(),
                "request.method \"GE T\"",
            ),
            (&|e| e.request.method = String::new(), "request.method \"\""),
            (
                &|e| e.request.path = "v1/items".into(),
                "request.path \"v1/items\"",
            ),
            (
                &|e| e.request.path = String::new(),
                "does not start with `/`",
            ),
            (
                &|e| {
                    e.request
                        .headers
                        .insert("x-a".into(), vec!["a\r\nInjected: 1".into()]);
                },
                "request.headers[\"x-a\"] holds \\r",
            ),
            (
                &|e| {
                    e.response.headers.insert("x b".into(), vec!["v".into()]);
                },
                "response.headers has the name \"x b\"",
            ),
            (
                &|e| {
                    e.response.headers.insert(String::new(), vec!["v".into()]);
                },
                "response.headers has the name \"\"",
            ),
            (
                &|e| {
                    e.response.headers.insert("x-n".into(), vec!["a\0".into()]);
                },
                "holds \\0",
            ),
            (
                &|e| {
                    let mut t = Headers::new();
                    t.insert("x-t".into(), vec!["a\nb".into()]);
                    e.response.trailers = Some(t);
                },
                "response.trailers[\"x-t\"] holds \\n",
            ),
        ];
        for (edit, needle) in refused {
            let e = with(edit).unwrap_err();
            assert!(e.contains(needle), "{needle}: {e}");
        }
        // What HTTP allows reads back: a method with a `-`, the root path, a tab in a
        // header value.
        for edit in [
            &(|e: &mut Exchange| e.request.method = "M-SEARCH".into()) as Edit<'_>,
            &|e| e.request.path = "/".into(),
            &|e| {
                e.request
                    .headers
                    .insert("x-tab".into(), vec!["a\tb".into()]);
            },
        ] {
            assert!(with(edit).is_ok());
        }
    }

    /// A zstd frame of `n` zero bytes, written streaming (no content size), as the files are.
    fn zeros_frame(n: u64) -> Vec<u8> {
        let mut enc = zstd::stream::write::Encoder::new(Vec::new(), 3).unwrap();
        std::io::copy(&mut std::io::repeat(0).take(n), &mut enc).unwrap();
        enc.finish().unwrap()
    }

    #[test]
    fn a_payload_that_decompresses_past_the_limit_is_refused_at_the_limit() {
        let limit = 4096;
        let at_limit = decompress_limited(&zeros_frame(limit), limit).unwrap();
        assert_eq!(at_limit.len() as u64, limit);
        let e = decompress_limited(&zeros_frame(limit + 1), limit).unwrap_err();
        assert!(
            matches!(e, RecordingError::DecodedTooLarge { limit: 4096 }),
            "{e:?}"
        );
        let text = e.to_string();
        assert!(text.contains("more than 4 KiB (4096 bytes)"), "{text}");
        assert!(text.contains("no Wraith writes a larger one"), "{text}");
        // A bomb: a few KB that would decompress to 64 MiB is refused after `limit + 1` bytes.
        let bomb = zeros_frame(64 << 20);
        assert!(bomb.len() < 64 << 10, "{}", bomb.len());
        assert!(matches!(
            decompress_limited(&bomb, limit),
            Err(RecordingError::DecodedTooLarge { .. })
        ));
    }

    #[test]
    fn the_public_reader_holds_files_to_max_exchange_bytes() {
        // A frame of limit + 1 bytes is too slow to build in a unit test: the public reader
        // is the limited one with the constant, and takes an ordinary file.
        assert_eq!(MAX_EXCHANGE_BYTES, 1 << 30);
        let bytes = encode_exchange(&sample()).unwrap();
        assert_eq!(decompress(&bytes).unwrap(), encode_cbor(&sample()));
    }

    #[test]
    fn an_exchange_past_the_limit_is_refused_by_the_encoder() {
        let ex = sample();
        let size = cbor_len(&ex);
        assert_eq!(size, encode_cbor(&ex).len() as u64);
        // At the limit it is written and reads back; one byte over, it is refused.
        let bytes = encode_exchange_limited(&ex, size).unwrap();
        assert_eq!(read_exchange(&bytes).unwrap(), ex);
        let e = encode_exchange_limited(&ex, size - 1).unwrap_err();
        match &e {
            RecordingError::ExchangeTooLarge {
                what,
                size: s,
                limit,
            } => {
                assert_eq!(
                    (what.as_str(), *s, *limit),
                    ("the exchange", size, size - 1)
                );
            }
            other => panic!("{other:?}"),
        }
        let text = e.to_string();
        assert!(
            text.contains(&format!("is {size} bytes of CBOR, more than the")),
            "{text}"
        );
        assert!(text.contains("leave it out"), "{text}");
    }

    #[test]
    fn cbor_len_counts_what_encode_cbor_writes() {
        let mut ex = sample();
        ex.frames[0].body = vec![7; 100_000];
        assert_eq!(cbor_len(&ex), encode_cbor(&ex).len() as u64);
    }

    #[test]
    fn sizes_read_as_people_write_them() {
        assert_eq!(human_bytes(1 << 30), "1 GiB");
        assert_eq!(human_bytes(64 << 20), "64 MiB");
        assert_eq!(human_bytes(4096), "4 KiB");
        assert_eq!(human_bytes(4097), "4097 bytes");
        assert_eq!(human_bytes(0), "0 bytes");
    }

    #[test]
    fn garbage_is_a_decode_error() {
        assert!(read_exchange(b"not zstd").is_err());
        let not_cbor = zstd::stream::encode_all(&b"\xff\xff"[..], 3).unwrap();
        assert!(read_exchange(&not_cbor).is_err());
    }
}
