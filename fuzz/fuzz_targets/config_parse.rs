//! The twin's config files from arbitrary text: the first byte picks the parser (`wraith.toml`,
//! `scrub.toml`, `drift.toml`, `lua/routes.toml`, a duration as `wraith.toml` spells one).
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    match pick % 5 {
        0 => {
            if let Ok(text) = std::str::from_utf8(rest) {
                let _ = wraith_twin::TwinConfig::parse(text, Path::new("wraith.toml"));
            }
        }
        1 => {
            let _ = wraith_recording::ScrubPolicy::parse(rest, Path::new("scrub.toml"));
        }
        2 => {
            if let Ok(text) = std::str::from_utf8(rest) {
                let _ = wraith_twin::DriftConfig::parse(text, Path::new("drift.toml"));
            }
        }
        3 => {
            if let Ok(text) = std::str::from_utf8(rest) {
                let _ = wraith_script::routes::parse_routes_file(text);
            }
        }
        _ => {
            if let Ok(text) = std::str::from_utf8(rest) {
                let _ = wraith_twin::duration::parse_duration(text);
            }
        }
    }
});
