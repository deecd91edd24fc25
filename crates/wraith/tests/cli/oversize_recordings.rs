//! A recording that decompresses past the one limit every reader and writer of recordings
//! shares (`wraith_recording::MAX_EXCHANGE_BYTES`, 1 GiB of CBOR per exchange file), black-box:
//! a file of 512 KiB that decompresses to 16 GiB of zeros replaces one recording of the example
//! twin. Every command that reads the recordings refuses it with its documented exit code,
//! naming the file and the limit, and stops decompressing at the limit: each runs with its
//! data segment capped (`ulimit -d`, 6 GiB: the limit's buffer as it grows, and the allocator's
//! own reserve) far below what reading the file whole would need.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::support::{bin, example_shop_twin};

const SESSION: &str = "20261129T201216Z-ec0a1f";
const BOMB: &str = "000003.wrec.zst";
/// The data segment each command may use, in KiB: 6 GiB. Reading up to the 1 GiB limit fits
/// in it; reading the 16 GiB file whole cannot.
const DATA_LIMIT_KIB: &str = "6291456";

/// One zstd frame of `blocks` run-length blocks of 128 KiB of zeros each: 4 bytes per block.
/// Written as Wraith writes its files, with no content size in the frame header, so a reader
/// learns the size only by decompressing.
fn zero_bomb(blocks: u32) -> Vec<u8> {
    const BLOCK: u32 = 128 * 1024;
    // Magic number; frame header descriptor 0 (no content size, no checksum, no dictionary,
    // not single-segment); window descriptor 2^(10+7) = 128 KiB.
    let mut out = vec![0x28, 0xB5, 0x2F, 0xFD, 0x00, 7 << 3];
    for i in 0..blocks {
        // Block header, 3 bytes little-endian: last block, block type 1 (RLE), size.
        let header = (BLOCK << 3) | (1 << 1) | u32::from(i + 1 == blocks);
        out.extend_from_slice(&header.to_le_bytes()[..3]);
        out.push(0);
    }
    out
}

/// `wraith <args>` in `dir` with its data segment capped; it must exit within two minutes.
fn capped(dir: &Path, args: &[&str]) -> Output {
    let mut child = Command::new("sh")
        .current_dir(dir)
        .arg("-c")
        .arg("ulimit -d \"$0\" && exec \"$@\"")
        .arg(DATA_LIMIT_KIB)
        .arg(bin())
        .args(args)
        .env("WRAITH_HMAC_KEY", "oversize-test-key")
        .env_remove("CI")
        .env("XDG_CONFIG_HOME", dir.join("config"))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(120);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            let out = child.wait_with_output().unwrap();
            panic!(
                "wraith {args:?} was expected to exit but kept running: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

/// The exit code is `code`, and the output (stderr, or stdout for lint's findings) names the
/// file, the limit and how to fix it.
fn refused(args: &[&str], out: &Output, code: i32, needles: &[&str]) {
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(out.status.code(), Some(code), "wraith {args:?}: {text}");
    assert!(!text.contains("panicked"), "wraith {args:?}: {text}");
    for needle in [BOMB, "decompresses to more than 1 GiB (1073741824 bytes)"]
        .iter()
        .chain(needles)
    {
        assert!(
            text.contains(needle),
            "wraith {args:?}: no {needle:?} in {text}"
        );
    }
}

#[test]
fn a_recording_that_decompresses_past_the_limit_is_refused_naming_the_file() {
    // The bomb is one zstd frame any reader takes: a short one decodes to its zeros.
    assert_eq!(
        zstd::stream::decode_all(&zero_bomb(3)[..]).unwrap(),
        vec![0; 3 * 128 * 1024]
    );
    let t = example_shop_twin();
    let twin = t.path_str();
    let dir = t.tmp.path();
    let synth = capped(dir, &["synth", &twin]);
    assert!(synth.status.success(), "{synth:?}");
    let bomb = zero_bomb(128 * 1024);
    assert_eq!(bomb.len(), 6 + 4 * 128 * 1024);
    std::fs::write(
        t.root.join("recordings/sessions").join(SESSION).join(BOMB),
        &bomb,
    )
    .unwrap();

    // Every reader: IO failure (4), naming the file and saying what to do with it.
    let fix = "move its session folder out of recordings/sessions/";
    for cmd in ["synth", "check", "coverage", "inspect"] {
        let args = [cmd, twin.as_str()];
        refused(&args, &capped(dir, &args), 4, &["corrupt recording", fix]);
    }
    // lint reports it as an error finding (1).
    let args = ["lint", twin.as_str()];
    refused(&args, &capped(dir, &args), 1, &["recording-exchange"]);
    // compose refuses an input whose recordings it cannot read (1), before writing anything.
    let other = example_shop_twin();
    let out_dir = dir.join("composite");
    let args = [
        "compose",
        "--base",
        twin.as_str(),
        "--overlay",
        &other.path_str(),
        "--output",
        out_dir.to_str().unwrap(),
    ];
    refused(&args, &capped(dir, &args), 1, &[SESSION]);
    assert!(!out_dir.exists());
    // serve without a model synthesizes one first, and stops there.
    std::fs::remove_file(t.root.join("model/twin.wir.json")).unwrap();
    let args = ["serve", twin.as_str(), "--port", "0"];
    refused(
        &args,
        &capped(dir, &args),
        4,
        &["running `wraith synth` first", fix],
    );
}
