//! The engine over the bundled example twin (`examples/twins/shop`: its recordings synthesized
//! as `wraith synth` would, its `state/schema.json` and fixtures) answering arbitrary requests:
//! every request gets an HTTP status, never a panic.
#![no_main]

use std::path::Path;
use std::sync::OnceLock;

use libfuzzer_sys::arbitrary::{self, Arbitrary};
use libfuzzer_sys::fuzz_target;
use wraith_engine::{
    ClockConfig, ClockMode, Engine, EngineOptions, FixtureSetFiles, FixtureTree, Request,
};

fn shop_dir() -> &'static Path {
    Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../examples/twins/shop"
    ))
}

fn engine() -> &'static Engine {
    static ENGINE: OnceLock<Engine> = OnceLock::new();
    ENGINE.get_or_init(|| {
        let dir = shop_dir();
        let sessions = wraith_recording::read_sessions(&dir.join("recordings/sessions"))
            .expect("the example twin's recordings read");
        let mut model = wraith_synth::synthesize(
            &sessions,
            &wraith_synth::SynthOptions {
                twin: "shop".into(),
                base_url: "http://127.0.0.1:18080".into(),
                tool_version: "fuzz".into(),
                tag: None,
                request_keying: Default::default(),
                run_gap_us: None,
            },
        )
        .model;
        wraith_engine::precompute::fill(&mut model);
        let schema = std::fs::read_to_string(dir.join("state/schema.json")).ok();
        let mut tree = FixtureTree::default();
        tree.sets.insert(
            "default".into(),
            FixtureSetFiles {
                fixture_json: std::fs::read_to_string(
                    dir.join("state/fixtures/default/fixture.json"),
                )
                .ok(),
                ..FixtureSetFiles::default()
            },
        );
        let opts = EngineOptions {
            clock: ClockConfig {
                mode: ClockMode::Deterministic,
                base_epoch: 1_700_000_000,
            },
            twin_name: Some("shop".into()),
            ..EngineOptions::default()
        };
        Engine::new(model, schema.as_deref(), tree, opts).expect("the example twin serves")
    })
}

fn route_paths() -> &'static [String] {
    static PATHS: OnceLock<Vec<String>> = OnceLock::new();
    PATHS.get_or_init(|| {
        engine()
            .model()
            .routes
            .iter()
            .map(|r| r.path.clone())
            .collect()
    })
}

const METHODS: &[&str] = &[
    "GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS", "get",
];
const CONTENT_TYPES: &[&str] = &[
    "application/json",
    "application/x-www-form-urlencoded",
    "multipart/form-data; boundary=X",
    "text/plain",
    "application/merge-patch+json",
];

#[derive(Debug, Arbitrary)]
enum Method {
    Known(u8),
    Spelled(String),
}

#[derive(Debug, Arbitrary)]
enum PathIn {
    /// A route's path, with some segments swapped and some added.
    Route {
        route: u8,
        swaps: Vec<(u8, String)>,
        extra: Vec<String>,
    },
    Spelled(String),
}

#[derive(Debug, Arbitrary)]
struct Input {
    session: u8,
    method: Method,
    path: PathIn,
    query: String,
    headers: Vec<(String, String)>,
    content_type: Option<u8>,
    body: Vec<u8>,
}

fuzz_target!(|input: Input| {
    let engine = engine();
    let method = match input.method {
        Method::Known(i) => METHODS[i as usize % METHODS.len()].to_string(),
        Method::Spelled(s) => s,
    };
    let path = match input.path {
        PathIn::Route {
            route,
            swaps,
            extra,
        } => {
            let paths = route_paths();
            let mut segments: Vec<String> = paths[route as usize % paths.len()]
                .split('/')
                .map(str::to_string)
                .collect();
            for (at, s) in swaps {
                let i = at as usize % segments.len();
                if i > 0 {
                    segments[i] = s;
                }
            }
            segments.extend(extra);
            segments.join("/")
        }
        PathIn::Spelled(s) => s,
    };
    let mut headers = input.headers;
    if let Some(ct) = input.content_type {
        headers.push((
            "content-type".into(),
            CONTENT_TYPES[ct as usize % CONTENT_TYPES.len()].into(),
        ));
    }
    let req = Request {
        method,
        path,
        query: input.query,
        headers,
        body: input.body.into(),
    };
    // A handful of sessions, so state builds up across inputs as it does under a client.
    let session = ["a", "b", "c"].get(input.session as usize % 4).copied();
    let resp = engine.handle(session, &req);
    assert!((100..=599).contains(&resp.status), "{}", resp.status);
});
