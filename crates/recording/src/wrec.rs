//! The WREC codec: one exchange = one zstd frame holding one CBOR map.
//!
//! Encoding follows the field order of [`Exchange`] (which is the key order on disk), with
//! minimal-length CBOR and bodies as byte strings, so re-encoding a decoded file reproduces its
//! CBOR bytes exactly. zstd frames are written streaming (no content size in the header), like
//! the files Wraith has always written; decoding therefore must stream too.

use crate::error::RecordingError;
use crate::exchange::Exchange;

/// zstd level for new files: small files, fast; the format does not depend on it.
const ZSTD_LEVEL: i32 = 3;

/// Decode one `.wrec.zst` file's bytes.
pub fn read_exchange(bytes: &[u8]) -> Result<Exchange, RecordingError> {
    decode_cbor(&decompress(bytes)?)
}

/// The CBOR payload of a `.wrec.zst` file (its zstd frame decompressed, streaming: the frames
/// carry no content size).
pub fn decompress(bytes: &[u8]) -> Result<Vec<u8>, RecordingError> {
    zstd::stream::decode_all(bytes).map_err(|e| RecordingError::Decode(format!("zstd: {e}")))
}

/// Decode the CBOR payload (already decompressed). An answer whose status is no HTTP status
/// (three digits, 100 to 999) is refused here: nothing could replay it.
pub fn decode_cbor(cbor: &[u8]) -> Result<Exchange, RecordingError> {
    let ex: Exchange = ciborium::de::from_reader(cbor)
        .map_err(|e| RecordingError::Decode(format!("CBOR: {e}")))?;
    if !(100..=999).contains(&ex.response.status) {
        return Err(RecordingError::Decode(format!(
            "response.status {} is not an HTTP status (100 to 999)",
            ex.response.status
        )));
    }
    Ok(ex)
}

/// The CBOR payload of an exchange (before compression).
pub fn encode_cbor(ex: &Exchange) -> Vec<u8> {
    let mut out = Vec::with_capacity(512 + ex.request.body.len());
    // Invariant, not input: every field of Exchange maps to CBOR and a Vec sink never fails.
    #[allow(clippy::expect_used)]
    ciborium::ser::into_writer(ex, &mut out).expect("CBOR encoding into a Vec cannot fail");
    out
}

/// Encode an exchange as a complete `.wrec.zst` file.
pub fn encode_exchange(ex: &Exchange) -> Vec<u8> {
    let cbor = encode_cbor(ex);
    // Streaming encode: no content size in the frame header, like existing files. Invariant:
    // an in-memory source and a Vec sink cannot fail.
    #[allow(clippy::expect_used)]
    zstd::stream::encode_all(&cbor[..], ZSTD_LEVEL).expect("zstd into a Vec cannot fail")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exchange::*;

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
                body: b"{\"x\":1}".to_vec(),
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
        let bytes = encode_exchange(&ex);
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
            let e = read_exchange(&encode_exchange(&ex))
                .unwrap_err()
                .to_string();
            assert!(e.contains(&format!("response.status {status}")), "{e}");
        }
        for status in [100, 599, 999] {
            let mut ex = sample();
            ex.response.status = status;
            assert!(read_exchange(&encode_exchange(&ex)).is_ok());
        }
    }

    #[test]
    fn garbage_is_a_decode_error() {
        assert!(read_exchange(b"not zstd").is_err());
        let not_cbor = zstd::stream::encode_all(&b"\xff\xff"[..], 3).unwrap();
        assert!(read_exchange(&not_cbor).is_err());
    }
}
