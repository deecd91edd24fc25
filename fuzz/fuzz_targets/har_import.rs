//! HAR import on arbitrary bytes: every input is a session or a `HarError`.
#![no_main]

use std::path::Path;
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use wraith_recording::har::{BaseUrl, parse_har};

fn base() -> &'static BaseUrl {
    static BASE: OnceLock<BaseUrl> = OnceLock::new();
    BASE.get_or_init(|| BaseUrl::parse("https://api.example.com/v1").expect("a valid base URL"))
}

fuzz_target!(|data: &[u8]| {
    let _ = parse_har(data, Path::new("fuzz.har"), base());
});
