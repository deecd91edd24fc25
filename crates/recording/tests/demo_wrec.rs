//! The real WREC recordings of the demo twin read exactly and re-encode byte-identically.
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};

use wraith_recording::{read_exchange, read_sessions, session, wrec};

fn demo_sessions() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/corpora/wraith-demo/recordings/sessions")
}

fn demo_files() -> Vec<PathBuf> {
    let mut files = Vec::new();
    for dir in std::fs::read_dir(demo_sessions()).unwrap() {
        for f in std::fs::read_dir(dir.unwrap().path()).unwrap() {
            let p = f.unwrap().path();
            if p.to_string_lossy().ends_with(".wrec.zst") {
                files.push(p);
            }
        }
    }
    files.sort();
    files
}

#[test]
fn demo_wrec_reencodes_byte_identical_cbor() {
    let files = demo_files();
    assert_eq!(files.len(), 6);
    for path in files {
        let bytes = std::fs::read(&path).unwrap();
        let original_cbor = zstd::stream::decode_all(&bytes[..]).unwrap();
        let ex = read_exchange(&bytes).unwrap();
        assert_eq!(wrec::encode_cbor(&ex), original_cbor, "{}", path.display());
        let reencoded = wrec::encode_exchange(&ex).unwrap();
        assert_eq!(
            zstd::stream::decode_all(&reencoded[..]).unwrap(),
            original_cbor
        );
        assert_eq!(read_exchange(&reencoded).unwrap(), ex);
    }
}

#[test]
fn demo_session_reads_with_manifest_and_exchanges_in_order() {
    let sessions = read_sessions(&demo_sessions()).unwrap();
    assert_eq!(sessions.len(), 1);
    let s = &sessions[0];
    assert_eq!(s.manifest.session_id, "20260706T235828Z-a23ed7");
    assert_eq!(s.manifest.exchange_count, 6);
    assert!(s.manifest.complete);
    let routes: Vec<_> = s
        .exchanges
        .iter()
        .map(|e| {
            format!(
                "{} {} {}",
                e.request.method, e.request.path, e.response.status
            )
        })
        .collect();
    assert_eq!(
        routes,
        [
            "GET /health 200",
            "POST /customers 201",
            "GET /customers/cus_000001 200",
            "POST /orders 201",
            "GET /orders/ord_000001 200",
            "GET /orders/summary 200"
        ]
    );
    for (i, e) in s.exchanges.iter().enumerate() {
        assert_eq!(e.correlation.exchange_index, i as u64);
        assert_eq!(e.safety.policy_hash, s.manifest.policy_hash);
    }
    let post = &s.exchanges[1];
    assert_eq!(post.content.body_size_bytes, 165);
    assert_eq!(post.safety.scrub_rule_ids, ["pii-json-name"]);
    assert_eq!(
        s.manifest.end_time_us,
        s.exchanges[5].timing.request_start_us
    );
}

#[test]
fn demo_manifest_json_reproduced_byte_identical() {
    let dir = std::fs::read_dir(demo_sessions())
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let original = std::fs::read(dir.join("manifest.json")).unwrap();
    let m: wraith_recording::Manifest = serde_json::from_slice(&original).unwrap();
    let mut expected = original.clone();
    if expected.last() != Some(&b'\n') {
        expected.push(b'\n');
    }
    assert_eq!(session::manifest_json(&m), expected);
}
