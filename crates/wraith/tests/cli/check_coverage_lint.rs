//! `wraith coverage` and `wraith lint`, black-box on a copy of the demo twin.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::check_support;

use check_support::*;
use serde_json::Value;

#[test]
fn coverage_lists_routes_variants_and_entity_types_without_create() {
    let t = DemoTwin::synthesized();
    let out = t.run(&["coverage", "--json"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let c = stdout_json(&out);
    assert_eq!(c["exchanges"], 6);
    assert_eq!(c["sessions"], 1);
    let total = c["routes_total"].as_u64().unwrap();
    assert!(total >= 5, "{c:#}");
    assert_eq!(c["routes_exercised"], total);
    assert_eq!(c["route_coverage_bp"], 10_000);
    assert_eq!(c["uncovered_requests"], 0);
    // Every demo route was recorded once.
    assert_eq!(
        c["routes_seen_once"].as_array().unwrap().len() as u64,
        total
    );
    for r in c["routes"].as_array().unwrap() {
        assert!(r["variants"].as_u64().unwrap() >= 1, "{r:#}");
        assert_eq!(r["exchanges"], 1);
    }
    insta::assert_json_snapshot!("demo_coverage", c);
    // The JSON is deterministic.
    let again = stdout_json(&t.run(&["coverage", "--json"]));
    assert_eq!(c, again);
    let text = t.run(&["coverage"]);
    assert!(String::from_utf8_lossy(&text.stdout).starts_with("coverage  demo  routes"));
}

#[test]
fn coverage_openapi_counts_the_documents_operations_the_twin_answers() {
    let t = DemoTwin::synthesized();
    // YAML with an unquoted numeric response key, as OpenAPI documents are often written.
    let yaml = t.root.join("spec.yaml");
    std::fs::write(
        &yaml,
        "openapi: 3.0.3\ninfo:\n  title: Demo API\n  version: \"1.2\"\npaths:\n  \
         /customers:\n    post:\n      responses:\n        200:\n          description: ok\n    \
         get: {}\n  /customers/{customerId}:\n    get: {}\n  /orders/summary:\n    get: {}\n  \
         /widgets:\n    get: {}\n",
    )
    .unwrap();
    let out = t.run(&["coverage", "--json", "--openapi", yaml.to_str().unwrap()]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let spec = stdout_json(&out)["spec_coverage"].clone();
    assert_eq!(spec["api_title"], "Demo API");
    assert_eq!(
        (spec["covered_count"].as_u64(), spec["total_count"].as_u64()),
        (Some(3), Some(5))
    );
    assert_eq!(spec["coverage_bp"], 6000);
    assert_eq!(
        spec["uncovered_operations"],
        serde_json::json!([{"method": "GET", "path": "/customers"}, {"method": "GET", "path": "/widgets"}])
    );
    assert_eq!(
        spec["routes_not_in_spec"],
        serde_json::json!(["GET /health", "POST /orders", "GET /orders/:param"])
    );
    let text = String::from_utf8_lossy(
        &t.run(&["coverage", "--openapi", yaml.to_str().unwrap()])
            .stdout,
    )
    .into_owned();
    assert!(
        text.contains("openapi  Demo API 1.2: 3/5 operation(s)"),
        "{text}"
    );

    // Swagger 2 in JSON: paths sit below basePath.
    let json = t.root.join("swagger.json");
    std::fs::write(
        &json,
        r#"{"swagger":"2.0","info":{"title":"T","version":"1"},"basePath":"/orders","paths":{"/{id}":{"get":{}},"/summary":{"get":{}}}}"#,
    )
    .unwrap();
    let out = t.run(&["coverage", "--json", "--openapi", json.to_str().unwrap()]);
    assert_eq!(stdout_json(&out)["spec_coverage"]["covered_count"], 2);

    // Not an OpenAPI document, not text, and no document at all: usage errors naming the file.
    let other = t.root.join("other.json");
    std::fs::write(&other, r#"{"a": 1}"#).unwrap();
    let latin1 = t.root.join("latin1.yaml");
    std::fs::write(&latin1, b"openapi: 3.0.0\ninfo: {title: caf\xe9}\n").unwrap();
    for (path, needle) in [
        (other.clone(), "not an OpenAPI document"),
        (latin1, "not UTF-8 text (byte 32"),
        (t.root.join("nowhere.yaml"), "cannot read it"),
    ] {
        let out = t.run(&["coverage", "--openapi", path.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(1));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("--openapi") && err.contains(needle), "{err}");
    }
}

/// Without `--openapi`, coverage reads the document `[service] spec` names, relative to the
/// twin folder; a flag wins over it, and a missing one is named as the config's.
#[test]
fn coverage_reads_the_service_spec_when_no_openapi_flag_names_a_document() {
    let t = DemoTwin::synthesized();
    std::fs::write(
        t.root.join("spec.yaml"),
        "openapi: 3.0.3\ninfo: {title: Configured, version: \"1\"}\npaths:\n  /orders/summary:\n    get: {}\n",
    )
    .unwrap();
    let toml = t.root.join("wraith.toml");
    let text = std::fs::read_to_string(&toml).unwrap();
    assert!(text.contains("[service]\n"), "{text}");
    std::fs::write(
        &toml,
        text.replacen("[service]\n", "[service]\nspec = \"spec.yaml\"\n", 1),
    )
    .unwrap();
    let out = t.run(&["coverage", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let spec = stdout_json(&out)["spec_coverage"].clone();
    assert_eq!(spec["api_title"], "Configured");
    assert_eq!(spec["covered_count"], 1);
    // A flag wins.
    let other = t.root.join("other.yaml");
    std::fs::write(
        &other,
        "openapi: 3.0.3\ninfo: {title: Flagged, version: \"1\"}\npaths: {}\n",
    )
    .unwrap();
    let out = t.run(&["coverage", "--json", "--openapi", other.to_str().unwrap()]);
    assert_eq!(stdout_json(&out)["spec_coverage"]["api_title"], "Flagged");
    // A configured document that is not there is a usage error naming the key.
    std::fs::remove_file(t.root.join("spec.yaml")).unwrap();
    let out = t.run(&["coverage"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("[service] spec") && err.contains("spec.yaml"),
        "{err}"
    );
}

#[test]
fn coverage_openapi_says_a_json_document_is_too_deep_or_where_it_stops_being_json() {
    let t = DemoTwin::synthesized();
    // 100,000 nested arrays: measured on the text, not handed to the YAML reader (minutes,
    // then "not JSON or YAML" about valid JSON).
    let deep = t.root.join("deep.json");
    let depth = 100_000;
    std::fs::write(
        &deep,
        format!(
            r#"{{"openapi":"3.0.0","info":{{"title":"T","version":"1"}},"paths":{{}},"x":{}{}}}"#,
            "[".repeat(depth),
            "]".repeat(depth)
        ),
    )
    .unwrap();
    // A document that stops being JSON: where the JSON parser stopped.
    let cut = t.root.join("cut.json");
    std::fs::write(&cut, r#"{"openapi": "3.0.0", "paths": {}"#).unwrap();
    // 128 levels is as deep as a document is read, written as JSON or as YAML.
    let deepest = t.root.join("deepest.json");
    std::fs::write(
        &deepest,
        format!(
            r#"{{"openapi":"3.0.0","info":{{"title":"T","version":"1"}},"paths":{{}},"x":{}{}}}"#,
            "[".repeat(127),
            "]".repeat(127)
        ),
    )
    .unwrap();
    for (path, needle) in [
        (
            &deep,
            "nested deeper than 128 levels: arrays and objects nest 100001 levels deep",
        ),
        (
            &cut,
            "not JSON: EOF while parsing an object at line 1 column 32",
        ),
    ] {
        let out = t.run(&["coverage", "--openapi", path.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(1));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("--openapi") && err.contains(needle), "{err}");
    }
    let out = t.run(&["coverage", "--json", "--openapi", deepest.to_str().unwrap()]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(stdout_json(&out)["spec_coverage"]["api_title"], "T");
}

/// A JSON document naming one key twice in an object is refused (exit 1, as a document that
/// is not JSON is), naming the key, its JSON pointer and its line, never read with the last
/// value winning: here `/customers` twice under `paths`, the second hiding the first's `post`.
#[test]
fn coverage_openapi_refuses_a_json_document_with_a_duplicate_key() {
    let t = DemoTwin::synthesized();
    let twice = t.root.join("twice.json");
    std::fs::write(
        &twice,
        "{\"openapi\": \"3.0.0\", \"info\": {\"title\": \"T\", \"version\": \"1\"},\n\
         \"paths\": {\n\"/customers\": {\"post\": {}},\n\"/customers\": {\"get\": {}}}}\n",
    )
    .unwrap();
    // Deeper down, and at the top level.
    let nested = t.root.join("nested.json");
    std::fs::write(
        &nested,
        r#"{"openapi":"3.0.0","info":{"title":"T","version":"1"},"paths":{"/a/{x}":{"get":{"responses":{"200":{},"200":{}}}}}}"#,
    )
    .unwrap();
    let top = t.root.join("top.json");
    std::fs::write(
        &top,
        r#"{"openapi":"3.0.0","info":{"title":"T","version":"1"},"paths":{},"paths":{}}"#,
    )
    .unwrap();
    for (path, needle) in [
        (
            &twice,
            "duplicate key \"/customers\" in the object at /paths (JSON pointer \
             /paths/~1customers), written again at line 4 column",
        ),
        (
            &nested,
            "duplicate key \"200\" in the object at /paths/~1a~1{x}/get/responses (JSON \
             pointer /paths/~1a~1{x}/get/responses/200)",
        ),
        (
            &top,
            "duplicate key \"paths\" in the top-level object (JSON pointer /paths)",
        ),
    ] {
        let out = t.run(&["coverage", "--json", "--openapi", path.to_str().unwrap()]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{err}");
        assert!(
            out.stdout.is_empty(),
            "{}",
            String::from_utf8_lossy(&out.stdout)
        );
        assert!(
            err.contains(&format!("--openapi {}: ", path.display()))
                && err.contains(needle)
                && err.contains("remove or merge the duplicate"),
            "{err}"
        );
    }
    // YAML's reader refuses a key written twice in a mapping itself, with the line; the error
    // says what is wrong, not that the document is no YAML.
    let yaml = t.root.join("twice.yaml");
    std::fs::write(
        &yaml,
        "openapi: 3.0.0\ninfo: {title: T, version: \"1\"}\npaths:\n  /p: {get: {}}\n  /p: {post: {}}\n",
    )
    .unwrap();
    let out = t.run(&["coverage", "--openapi", yaml.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("duplicate entry with key \"/p\" at line ")
            && err.contains("remove or merge the duplicate")
            && !err.contains("not JSON or YAML"),
        "{err}"
    );
}

/// A path recorded on two hosts other than the base URL is two routes: `coverage` (the JSON's
/// `routes`, the seen-once list, the uncovered requests and the text) and `inspect
/// --provenance` name each as the check report does, `METHOD /path on <origin>`, so no name
/// appears twice, and keep the `origin` key beside it.
#[test]
fn coverage_and_provenance_name_the_origin_of_a_route_recorded_on_another_host() {
    let t = DemoTwin::init("gw", "https://api.gw.test/v1");
    let nodes = serde_json::json!({"items": []});
    let har = serde_json::json!({"log": {"version": "1.2", "creator": {"name": "t", "version": "1"},
    "pages": [], "entries": [
        check_support::notes::entry("GET", "https://api.gw.test/v1/regions", None, 200,
            &serde_json::json!({"data": []})),
        check_support::notes::entry("GET", "https://east.gw.test/api/v1/nodes", None, 200, &nodes),
        check_support::notes::entry("GET", "https://west.gw.test/api/v1/nodes", None, 200, &nodes),
        check_support::notes::entry("GET", "https://west.gw.test/api/v1/zones", None, 200, &nodes),
    ]}});
    t.import_har("gw", &har);
    t.synth();
    // The model the check reads, without one route: its recorded request is uncovered.
    t.drop_route("/api/v1/zones");
    let named = |doc: &Value| -> Vec<(String, Option<String>)> {
        let mut rows: Vec<(String, Option<String>)> = doc["routes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                (
                    r["route"].as_str().unwrap().to_string(),
                    r.get("origin").map(|o| o.as_str().unwrap().to_string()),
                )
            })
            .collect();
        rows.sort();
        rows
    };
    let want = [
        (
            "GET /api/v1/nodes on https://east.gw.test".to_string(),
            Some("https://east.gw.test".to_string()),
        ),
        (
            "GET /api/v1/nodes on https://west.gw.test".to_string(),
            Some("https://west.gw.test".to_string()),
        ),
        ("GET /v1/regions".to_string(), None),
    ];
    let c = stdout_json(&t.run(&["coverage", "--json"]));
    assert_eq!(named(&c), want, "{c:#}");
    let mut once: Vec<&str> = c["routes_seen_once"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    once.sort_unstable();
    assert_eq!(
        once,
        [
            "GET /api/v1/nodes on https://east.gw.test",
            "GET /api/v1/nodes on https://west.gw.test",
            "GET /v1/regions"
        ]
    );
    assert_eq!(
        c["uncovered_examples"],
        serde_json::json!(["GET /api/v1/zones on https://west.gw.test"]),
        "{c:#}"
    );
    let text = t.run(&["coverage"]);
    let text = String::from_utf8_lossy(&text.stdout);
    for host in ["east", "west"] {
        let needle = format!("GET /api/v1/nodes on https://{host}.gw.test  [list]");
        assert_eq!(text.matches(&needle).count(), 1, "{needle} in {text}");
    }
    let p = stdout_json(&t.run(&["inspect", "--provenance", "--json"]));
    assert_eq!(named(&p), want, "{p:#}");
    let text = t.run(&["inspect", "--provenance"]);
    let text = String::from_utf8_lossy(&text.stdout);
    for host in ["east", "west"] {
        let needle = format!("GET /api/v1/nodes on https://{host}.gw.test ");
        assert_eq!(text.matches(&needle).count(), 1, "{needle} in {text}");
    }
    assert!(text.contains("  GET /v1/regions  "), "{text}");
}

/// The same path recorded on two hosts is two rows of the check report, each named with its
/// origin.
#[test]
fn check_reports_a_path_recorded_on_two_hosts_as_two_routes() {
    let t = DemoTwin::init("gw2", "https://api.gw.test/v1");
    let nodes = |n: u64| serde_json::json!({"items": [{"id": n}]});
    let har = serde_json::json!({"log": {"version": "1.2", "creator": {"name": "t", "version": "1"},
    "pages": [], "entries": [
        check_support::notes::entry("GET", "https://api.gw.test/v1/regions", None, 200,
            &serde_json::json!({"data": []})),
        check_support::notes::entry("GET", "https://east.gw.test/api/v1/nodes", None, 200, &nodes(1)),
        check_support::notes::entry("GET", "https://west.gw.test/api/v1/nodes", None, 200, &nodes(2)),
        check_support::notes::entry("GET", "https://west.gw.test/api/v1/nodes", None, 200, &nodes(2)),
    ]}});
    t.import_har("gw2", &har);
    t.synth();
    let out = t.run(&["check", "--json"]);
    let report = stdout_json(&out);
    let mut rows: Vec<(String, u64)> = report["routes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["route"].as_str().unwrap().to_string(),
                r["exchanges"].as_u64().unwrap(),
            )
        })
        .collect();
    rows.sort();
    assert_eq!(
        rows,
        [
            ("GET /api/v1/nodes on https://east.gw.test".to_string(), 1),
            ("GET /api/v1/nodes on https://west.gw.test".to_string(), 2),
            ("GET /v1/regions".to_string(), 1),
        ],
        "{report:#}"
    );
    assert_eq!(report["exchanges_passed"], 4, "{report:#}");
    for x in report["exchanges"].as_array().unwrap() {
        let path = x["path"].as_str().unwrap();
        let route = x["route"].as_str().unwrap();
        assert!(
            path != "/api/v1/nodes" || route.starts_with("GET /api/v1/nodes on https://"),
            "{x:#}"
        );
    }
}

#[test]
fn coverage_counts_recorded_requests_the_model_has_no_route_for() {
    let t = DemoTwin::synthesized();
    t.drop_route("/health");
    let c = stdout_json(&t.run(&["coverage", "--json"]));
    assert_eq!(c["uncovered_requests"], 1);
    assert_eq!(c["uncovered_examples"][0], "GET /health");
}

/// Counts in the text summaries take their noun's number: one session, six exchanges, one moment.
#[test]
fn text_summaries_say_one_session_not_one_sessions() {
    let t = DemoTwin::synthesized();
    let text = String::from_utf8(t.run(&["coverage"]).stdout).unwrap();
    assert!(text.contains("  1 session  6 exchanges"), "{text}");
    let text = String::from_utf8(t.run(&["inspect", "--provenance"]).stdout).unwrap();
    assert!(text.contains("(1 moment)"), "{text}");
    assert!(!text.contains("(1 moments)"), "{text}");
}

#[test]
fn lint_passes_a_freshly_synthesized_twin() {
    let t = DemoTwin::synthesized();
    let out = t.run(&["lint", "--json"]);
    let v = stdout_json(&out);
    assert_eq!(v["errors"], 0, "{v:#}");
    assert_eq!(out.status.code(), Some(0));
}

#[test]
fn lint_rejects_a_model_that_is_not_canonical_json() {
    let t = DemoTwin::synthesized();
    let model: Value =
        serde_json::from_str(&std::fs::read_to_string(t.model_path()).unwrap()).unwrap();
    std::fs::write(
        t.model_path(),
        serde_json::to_string_pretty(&model).unwrap(),
    )
    .unwrap();
    let out = t.run(&["lint", "--json"]);
    assert_eq!(out.status.code(), Some(1));
    let v = stdout_json(&out);
    let rules: Vec<&str> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["severity"] == "error")
        .map(|f| f["rule"].as_str().unwrap())
        .collect();
    assert_eq!(rules, ["canonical_json"], "{v:#}");
}

/// `symbols.json` records the digest of the model synth wrote beside it: a model that is not
/// that one (a synth stopped between its two renames, or a hand edit) is a warning naming the
/// symbols file; the pair synth wrote is none.
#[test]
fn lint_warns_of_symbols_written_beside_another_model() {
    let t = DemoTwin::synthesized();
    let rules = |out: &std::process::Output| -> Vec<String> {
        stdout_json(out)["findings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| format!("{} {}", f["rule"].as_str().unwrap(), f["file"]))
            .collect()
    };
    let symbols: Value = serde_json::from_str(
        &std::fs::read_to_string(t.model_path().with_file_name("symbols.json")).unwrap(),
    )
    .unwrap();
    assert!(
        symbols["model_digest"]
            .as_str()
            .is_some_and(|d| d.starts_with("sha256:")),
        "{symbols:#}"
    );
    let before = t.run(&["lint", "--json"]);
    assert!(
        !rules(&before)
            .iter()
            .any(|r| r.starts_with("symbols-stale")),
        "{:?}",
        rules(&before)
    );
    // Another model in the same canonical form: one constant changed.
    let model = std::fs::read_to_string(t.model_path()).unwrap();
    let edited = model.replacen("\"tool_version\":\"", "\"tool_version\":\"x", 1);
    assert_ne!(edited, model);
    std::fs::write(t.model_path(), edited).unwrap();
    let out = t.run(&["lint", "--json"]);
    assert_eq!(out.status.code(), Some(0), "a warning, not an error");
    assert!(
        rules(&out).contains(&"symbols-stale \"model/symbols.json\"".to_string()),
        "{:?}",
        rules(&out)
    );
}

/// A model holding `GET /promos` and `GET /promos/` as two routes (hand-edited, or synthesized
/// before synth made both spellings one route), which the engine's router files as one (it
/// leaves a trailing slash out) and answers from the first: lint warns of them, naming both
/// and the one answered; the twin still serves, so it is no error.
#[test]
fn lint_warns_of_routes_the_router_would_file_as_one() {
    let t = DemoTwin::init("promos", "https://api.promos.test");
    let har = serde_json::json!({"log": {"version": "1.2", "creator": {"name": "t", "version": "1"},
    "pages": [], "entries": [
        check_support::notes::entry("GET", "https://api.promos.test/promos", None, 200,
            &serde_json::json!([{"id": 1}])),
    ]}});
    t.import_har("promos", &har);
    t.synth();
    let mut model = t.model();
    let routes = model["routes"].as_array_mut().unwrap();
    let mut slashed = routes[0].clone();
    slashed["path"] = serde_json::json!("/promos/");
    slashed["id"] = serde_json::json!("get_promos_slashed_00000000");
    for v in slashed["variants"].as_array_mut().unwrap() {
        let id = format!("{}_slashed", v["id"].as_str().unwrap());
        v["id"] = serde_json::json!(id);
    }
    routes.push(slashed);
    t.write_model(&model);
    let out = t.run(&["lint", "--json"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let findings = stdout_json(&out)["findings"].clone();
    let found: Vec<&Value> = findings
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["rule"] == "routes-filed-as-one")
        .collect();
    assert_eq!(found.len(), 1, "{findings:#}");
    assert_eq!(found[0]["severity"], "warning", "{findings:#}");
    let message = found[0]["message"].as_str().unwrap();
    assert!(
        message.starts_with("GET /promos and GET /promos/ are one route to the engine's router")
            && message.contains("only GET /promos is ever answered"),
        "{message}"
    );
}

#[test]
fn lint_reports_duplicate_route_ids() {
    let t = DemoTwin::synthesized();
    let mut model = t.model();
    let routes = model["routes"].as_array_mut().unwrap();
    let first_id = routes[0]["id"].clone();
    routes[1]["id"] = first_id;
    t.write_model(&model);
    let out = t.run(&["lint", "--json"]);
    assert_eq!(out.status.code(), Some(1));
    let v = stdout_json(&out);
    let found = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["rule"] == "duplicate-route-id")
        .unwrap_or_else(|| panic!("{v:#}"));
    // What is wrong and how to fix it.
    assert!(
        found["message"]
            .as_str()
            .unwrap()
            .contains("re-run `wraith synth` to rebuild the model"),
        "{found}"
    );
}

#[test]
fn lint_checks_fixtures_against_the_schema() {
    let t = DemoTwin::synthesized();
    std::fs::write(
        t.root.join("state/schema.json"),
        r#"{"entity_types":{"widgets":{"primary_key":"id"}},"schema_version":1}"#,
    )
    .unwrap();
    let set = t.root.join("state/fixtures/baseline");
    std::fs::create_dir_all(set.join("patches")).unwrap();
    std::fs::write(
        set.join("fixture.json"),
        r#"{"name":"baseline","entities":{"widgets":[{"id":"w1"},{"label":"no id"},{"id":7}]}}"#,
    )
    .unwrap();
    std::fs::write(
        set.join("patches/widgets.patch.json"),
        r#"{"op":"add","path":"/x","value":1}"#,
    )
    .unwrap();
    let out = t.run(&["lint", "--json"]);
    assert_eq!(out.status.code(), Some(1));
    let v = stdout_json(&out);
    let rules: Vec<&str> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["rule"].as_str().unwrap())
        .collect();
    for want in [
        "fixture-json-keys",
        "fixture-missing-pk",
        "fixture-pk-type",
        "fixture-patch-keys",
    ] {
        assert!(rules.contains(&want), "missing {want}: {v:#}");
    }
    let text = String::from_utf8_lossy(&t.run(&["lint"]).stdout).into_owned();
    assert!(
        text.contains("the set name is always the directory name"),
        "{text}"
    );
    assert!(
        text.contains("widgets[2].id must be a string: write it in quotes"),
        "{text}"
    );
}

/// Two records with one key in a set: serve refuses the twin, so lint fails it in serve's
/// words; a file no command reads is a warning.
#[test]
fn lint_fails_two_fixture_records_with_one_key_and_warns_of_files_it_does_not_read() {
    let t = DemoTwin::synthesized();
    std::fs::write(
        t.root.join("state/schema.json"),
        r#"{"entity_types":{"widgets":{"primary_key":"id"}},"schema_version":1}"#,
    )
    .unwrap();
    let set = t.root.join("state/fixtures/default");
    std::fs::create_dir_all(&set).unwrap();
    std::fs::write(
        set.join("widgets.json"),
        r#"[{"id":"k1","n":1},{"id":"k2"},{"id":"k1","n":2}]"#,
    )
    .unwrap();
    let out = t.run(&["lint", "--json"]);
    let v = stdout_json(&out);
    let dup: Vec<_> = findings(&v)
        .into_iter()
        .filter(|(rule, _, _)| rule == "fixture-duplicate-pk")
        .collect();
    assert_eq!(dup.len(), 1, "{v:#}");
    assert_eq!(dup[0].1, "error");
    assert_eq!(out.status.code(), Some(1), "{v:#}");
    assert!(
        !findings(&v)
            .iter()
            .any(|(rule, _, _)| rule == "fixture-ignored-file"),
        "{v:#}"
    );
    // A YAML file beside them is read by nothing: lint says so.
    std::fs::write(set.join("kernels.yaml"), "- id: k9\n").unwrap();
    let v = stdout_json(&t.run(&["lint", "--json"]));
    let ignored: Vec<_> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["rule"] == "fixture-ignored-file")
        .collect();
    assert_eq!(ignored.len(), 1, "{v:#}");
    assert_eq!(ignored[0]["file"], "state/fixtures/default/kernels.yaml");
    assert_eq!(ignored[0]["severity"], "warning");
    assert!(
        dup[0]
            .2
            .contains("widgets[2] repeats primary key \"k1\" of widgets[0]; a set holds one"),
        "{v:#}"
    );
}

/// Lint reads a fixture set as serve does: `"entities": null` is the key left out (no error),
/// and files serve never reads are named: a legacy `<entity_type>.json` beside fixture.json,
/// and a file in patches/ that is not `<entity_type>.patch.json`.
#[test]
fn lint_reads_a_fixture_set_as_serve_does_and_names_the_files_it_never_reads() {
    let t = DemoTwin::synthesized();
    std::fs::write(
        t.root.join("state/schema.json"),
        r#"{"entity_types":{"widgets":{"primary_key":"id"}},"schema_version":1}"#,
    )
    .unwrap();
    let set = t.root.join("state/fixtures/default");
    std::fs::create_dir_all(set.join("patches")).unwrap();
    std::fs::write(
        set.join("fixture.json"),
        r#"{"entities":null,"parent":null}"#,
    )
    .unwrap();
    std::fs::write(set.join("widgets.json"), r#"[{"id":"w1"}]"#).unwrap();
    std::fs::write(set.join("patches/widgets.json"), r#"{"add":[{"id":"w2"}]}"#).unwrap();
    let v = stdout_json(&t.run(&["lint", "--json"]));
    let fixture_errors: Vec<_> = findings(&v)
        .into_iter()
        .filter(|(rule, severity, _)| rule.starts_with("fixture") && severity == "error")
        .collect();
    assert!(fixture_errors.is_empty(), "{v:#}");
    let mut ignored: Vec<(String, String)> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["rule"] == "fixture-ignored-file")
        .map(|f| {
            (
                f["file"].as_str().unwrap().to_string(),
                f["message"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    ignored.sort();
    assert_eq!(ignored.len(), 2, "{v:#}");
    assert_eq!(ignored[0].0, "state/fixtures/default/patches/widgets.json");
    assert!(ignored[0].1.contains("<entity_type>.patch.json"), "{v:#}");
    assert_eq!(ignored[1].0, "state/fixtures/default/widgets.json");
    assert!(ignored[1].1.contains("beside fixture.json"), "{v:#}");
}

/// A folder of `state/fixtures/` whose name starts with `.` is hidden: no reader takes it as a
/// set, so lint says so of one holding JSON files, and `--fixture` names the rule.
#[test]
fn a_hidden_folder_of_fixture_files_is_warned_of_and_named_by_fixture() {
    let t = DemoTwin::synthesized();
    let set = t.root.join("state/fixtures/.qa");
    std::fs::create_dir_all(&set).unwrap();
    std::fs::write(set.join("fixture.json"), r#"{"entities":{}}"#).unwrap();
    // An editor's hidden folder with no JSON in it is nothing to warn of.
    std::fs::create_dir_all(t.root.join("state/fixtures/.cache")).unwrap();
    std::fs::write(t.root.join("state/fixtures/.cache/x.swp"), "x").unwrap();
    let v = stdout_json(&t.run(&["lint", "--json"]));
    let hidden: Vec<_> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["rule"] == "fixture-set-hidden")
        .collect();
    assert_eq!(hidden.len(), 1, "{v:#}");
    assert_eq!(hidden[0]["file"], "state/fixtures/.qa");
    assert_eq!(hidden[0]["severity"], "warning");
    assert!(
        hidden[0]["message"]
            .as_str()
            .unwrap()
            .contains("rename it to `qa`"),
        "{v:#}"
    );
    let out = t.run(&["check", "--fixture", ".qa"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("unknown fixture set `.qa`"), "{err}");
    assert!(err.contains("starts with `.` is hidden"), "{err}");
}

/// A set seeding as many records of a type as `[serve.limits] max_entities_per_type` allows,
/// or more, leaves a session seeded from it no room to create one (507): lint warns, counting
/// the records as a session is seeded from the set (its parent's included, the implicit
/// default set of loose files too).
#[test]
fn lint_warns_of_a_fixture_set_seeding_a_type_up_to_the_entity_limit() {
    let t = DemoTwin::synthesized();
    let toml = std::fs::read_to_string(t.root.join("wraith.toml")).unwrap();
    std::fs::write(
        t.root.join("wraith.toml"),
        toml.replace("max_entities_per_type = 10000", "max_entities_per_type = 2"),
    )
    .unwrap();
    std::fs::write(
        t.root.join("state/schema.json"),
        r#"{"entity_types":{"widgets":{"primary_key":"id"}},"schema_version":1}"#,
    )
    .unwrap();
    let fixtures = t.root.join("state/fixtures");
    for (set, doc) in [
        ("small", r#"{"entities":{"widgets":[{"id":"w1"}]}}"#),
        (
            "full",
            r#"{"entities":{"widgets":[{"id":"w1"},{"id":"w2"}]}}"#,
        ),
        // One record of its own, two from its parent, a replaced one counted once.
        (
            "grown",
            r#"{"parent":"full","entities":{"widgets":[{"id":"w3"},{"id":"w1"}]}}"#,
        ),
    ] {
        std::fs::create_dir_all(fixtures.join(set)).unwrap();
        std::fs::write(fixtures.join(set).join("fixture.json"), doc).unwrap();
    }
    std::fs::write(
        fixtures.join("widgets.json"),
        r#"[{"id":"w1"},{"id":"w2"},{"id":"w3"},{"id":"w4"}]"#,
    )
    .unwrap();
    let out = t.run(&["lint", "--json"]);
    assert_eq!(out.status.code(), Some(0), "warnings only");
    let v = stdout_json(&out);
    let mut got: Vec<(String, String, String)> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["rule"] == "fixture-entity-limit")
        .map(|f| {
            (
                f["file"].as_str().unwrap().to_string(),
                f["severity"].as_str().unwrap().to_string(),
                f["message"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    got.sort();
    let files: Vec<&str> = got.iter().map(|(f, _, _)| f.as_str()).collect();
    assert_eq!(
        files,
        [
            "state/fixtures",
            "state/fixtures/full",
            "state/fixtures/grown"
        ],
        "{v:#}"
    );
    assert!(got.iter().all(|(_, s, _)| s == "warning"), "{got:#?}");
    for (file, want) in [
        ("state/fixtures", "set `default` seeds 4 `widgets` records"),
        (
            "state/fixtures/full",
            "set `full` seeds 2 `widgets` records",
        ),
        (
            "state/fixtures/grown",
            "set `grown` seeds 3 `widgets` records",
        ),
    ] {
        let (_, _, m) = got.iter().find(|(f, _, _)| f == file).unwrap();
        assert!(m.contains(want), "{m}");
        assert!(
            m.contains("max_entities_per_type = 2")
                && m.contains("refused 507")
                && m.contains("seed fewer than 2 `widgets` records or raise the limit"),
            "{m}"
        );
    }
    assert!(got[0].2.contains("2 more than"), "{}", got[0].2);
    assert!(got[1].2.contains("as many as"), "{}", got[1].2);
    assert!(got[2].2.contains("1 more than"), "{}", got[2].2);
}

/// Rule ids and severities of `wraith lint --json`'s findings, with their messages.
fn findings(v: &Value) -> Vec<(String, String, String)> {
    v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["rule"].as_str().unwrap().to_string(),
                f["severity"].as_str().unwrap().to_string(),
                f["message"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn lint_names_each_malformed_id_format_index_and_foreign_key_of_the_schema() {
    let t = DemoTwin::synthesized();
    std::fs::write(
        t.root.join("state/schema.json"),
        r#"{"entity_types":{"widgets":{"primary_key":"id","primarykey":"id",
        "id_format":"w_[0-9","indexes":[{"field":"n","type":"hash"},{"field":"m","type":"range"}],
        "foreign_keys":[{"field":"g","references":"gadgets"}]}},"schema_version":1,
        "indices":[]}"#,
    )
    .unwrap();
    let out = t.run(&["lint", "--json"]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "a dropped declaration is an error"
    );
    let got = findings(&stdout_json(&out));
    let has = |rule: &str, severity: &str, text: &str| {
        got.iter()
            .any(|(r, s, m)| r == rule && s == severity && m.contains(text))
    };
    assert!(has("schema-id-format", "error", "`w_[0-9`"), "{got:#?}");
    assert!(has("schema-indexes", "error", "indexes[0]"), "{got:#?}");
    assert!(
        !got.iter().any(|(_, _, m)| m.contains("indexes[1]")),
        "{got:#?}"
    );
    assert!(
        has("schema-foreign-keys", "error", "foreign_keys[0]"),
        "{got:#?}"
    );
    assert!(
        has("schema-unknown-key", "warning", "`primarykey`"),
        "{got:#?}"
    );
    assert!(
        has("schema-unknown-key", "warning", "top-level key `indices`"),
        "{got:#?}"
    );
}

#[test]
fn lint_holds_seeded_fixture_ids_and_references_to_the_declared_schema() {
    let t = DemoTwin::synthesized();
    std::fs::write(
        t.root.join("state/schema.json"),
        r#"{"entity_types":{
        "widgets":{"primary_key":"id","id_format":"w_[0-9]{3}","foreign_keys":[
            {"field":"gadget","references":"gadgets.id"},
            {"field":"buyer","references":"customers.id"},
            {"field":"maker","references":"gadgets.serial"}]},
        "gadgets":{"primary_key":"id"},
        "customers":{"primary_key":"id","foreign_keys":[{"field":"referrer","references":"customers.id"}]}},
        "schema_version":1}"#,
    )
    .unwrap();
    let base = t.root.join("state/fixtures/default");
    std::fs::create_dir_all(&base).unwrap();
    // `buyer` names a customer the recordings hold; `maker` a gadget by another field.
    std::fs::write(
        base.join("fixture.json"),
        r#"{"entities":{
        "widgets":[{"id":"w_001","gadget":"g1","buyer":"cus_000001","maker":"S-1"},
                   {"id":"bad","gadget":"g9","buyer":null}],
        "gadgets":[{"id":"g1","serial":"S-1"}],
        "customers":[{"id":"cus_fx","referrer":"cus_000001"},{"id":"cus_fy","referrer":"cus_nobody"}]}}"#,
    )
    .unwrap();
    // A child set that removes the gadget its inherited widget names.
    let child = t.root.join("state/fixtures/bare");
    std::fs::create_dir_all(child.join("patches")).unwrap();
    std::fs::write(child.join("fixture.json"), r#"{"parent":"default"}"#).unwrap();
    std::fs::write(
        child.join("patches/gadgets.patch.json"),
        r#"{"remove":["g1"]}"#,
    )
    .unwrap();
    let out = t.run(&["lint", "--json"]);
    assert_eq!(out.status.code(), Some(0), "warnings only");
    let got = findings(&stdout_json(&out));
    let of = |rule: &str| -> Vec<&String> {
        got.iter()
            .filter(|(r, s, _)| r == rule && s == "warning")
            .map(|(_, _, m)| m)
            .collect()
    };
    let ids = of("fixture-id-format");
    assert_eq!(ids.len(), 2, "`bad` in each set: {got:#?}");
    assert!(
        ids.iter()
            .all(|m| m.contains("\"bad\"") && m.contains("w_[0-9]{3}"))
    );
    let refs = of("fixture-foreign-key");
    // A route-derived type's declared foreign keys hold too: its routes define none.
    let want = [
        ("set `default`", "\"cus_fy\" has referrer = \"cus_nobody\""),
        ("set `bare`", "\"cus_fy\" has referrer = \"cus_nobody\""),
        ("set `default`", "\"bad\" has gadget = \"g9\""),
        ("set `bare`", "\"bad\" has gadget = \"g9\""),
        ("set `bare`", "\"w_001\" has gadget = \"g1\""),
        ("set `bare`", "\"w_001\" has maker = \"S-1\""),
    ];
    assert_eq!(refs.len(), want.len(), "{refs:#?}");
    for (set, text) in want {
        assert!(
            refs.iter().any(|m| m.contains(set) && m.contains(text)),
            "missing {set} {text}: {refs:#?}"
        );
    }
}

#[test]
fn lint_warns_of_a_primary_key_a_route_type_overrides_and_references_to_unknown_types() {
    let t = DemoTwin::synthesized();
    std::fs::write(
        t.root.join("state/schema.json"),
        r#"{"entity_types":{
        "customers":{"primary_key":"email"},
        "orders":{"primary_key":"id","id_format":"ord_[0-9]{6}"},
        "widgets":{"primary_key":"id","foreign_keys":[{"field":"g","references":"gizmos.id"}]}},
        "schema_version":1}"#,
    )
    .unwrap();
    let out = t.run(&["lint", "--json"]);
    assert_eq!(out.status.code(), Some(0));
    let got = findings(&stdout_json(&out));
    let shadowed: Vec<_> = got
        .iter()
        .filter(|(r, _, _)| r == "schema-shadowed")
        .collect();
    assert_eq!(
        shadowed.len(),
        1,
        "only another primary key is overridden; an id_format only adds: {got:#?}"
    );
    assert!(
        shadowed[0].2.contains("`customers`") && shadowed[0].2.contains("primary_key \"email\""),
        "{got:#?}"
    );
    assert!(
        got.iter().any(|(r, s, m)| r == "schema-foreign-key-target"
            && s == "warning"
            && m.contains("gizmos.id")),
        "{got:#?}"
    );
}

#[test]
fn lint_reports_a_broken_wraith_toml() {
    let t = DemoTwin::synthesized();
    std::fs::write(t.root.join("wraith.toml"), "[service\nname = 1\n").unwrap();
    let out = t.run(&["lint", "--json"]);
    // A twin folder is found by its wraith.toml, so a broken one is still linted.
    let v = stdout_json(&out);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        v["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["rule"] == "wraith_toml"),
        "{v:#}"
    );
}

/// Unknown `wraith.toml` keys are lint warnings whose message carries the line (as the
/// `[diff]` findings do), not the path the twin was named by, listed in file order (`line 9`
/// before `line 10`), so the report is the same wherever the twin lives.
#[test]
fn lint_lists_unknown_wraith_toml_keys_by_line_without_the_twin_path() {
    let t = DemoTwin::synthesized();
    // Unknown top-level keys at lines 6, 10 and 12.
    let text = "schema_version = 1\n\n\n\n\ngamma = 1\n\n\n\nbeta = 2\n\nalpha = 3\n\
                [service]\nname = \"wraith-demo\"\nbase_url = \"http://127.0.0.1:18080\"\n";
    std::fs::write(t.root.join("wraith.toml"), text).unwrap();

    let out = t.run(&["lint", "--json"]);
    assert_eq!(out.status.code(), Some(0));
    let v = stdout_json(&out);
    let messages: Vec<String> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["rule"] == "wraith_toml")
        .map(|f| f["message"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(messages.len(), 3, "{v:#}");
    let lines: Vec<&str> = messages
        .iter()
        .map(|m| m.split(':').next().unwrap())
        .collect();
    assert_eq!(lines, ["line 6", "line 10", "line 12"], "{messages:#?}");
    assert!(
        messages[0].starts_with("line 6: `gamma`: unknown key"),
        "{messages:#?}"
    );
    for m in &messages {
        assert!(!m.contains(&t.path_str()), "{m}");
    }
}

/// `coverage` (and `inspect --provenance`) read `wraith.toml` as every other command does: a
/// broken one is the same configuration error, exit 1, not something to read past.
#[test]
fn coverage_refuses_a_broken_wraith_toml_as_the_other_commands_do() {
    let t = DemoTwin::synthesized();
    std::fs::write(t.root.join("wraith.toml"), "[service\nname = 1\n").unwrap();
    let check = t.run(&["check"]);
    assert_eq!(check.status.code(), Some(1));
    let said = String::from_utf8_lossy(&check.stderr).into_owned();
    assert!(said.contains("wraith.toml"), "{said}");
    for args in [
        &["coverage"][..],
        &["coverage", "--json"],
        &["inspect", "--provenance"],
    ] {
        let out = t.run(args);
        assert_eq!(
            out.status.code(),
            Some(1),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(String::from_utf8_lossy(&out.stderr), said, "{args:?}");
        assert!(out.stdout.is_empty(), "{args:?}");
    }
}

/// The demo twin's one recording session: its folder name and path.
fn only_session(t: &DemoTwin) -> (String, std::path::PathBuf) {
    let dir = t.root.join("recordings/sessions");
    let mut ids: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(ids.len(), 1, "{ids:?}");
    let id = ids.pop().unwrap();
    let path = dir.join(&id);
    (id, path)
}

/// `wraith lint --json` of `t`, which must fail (exit 1) with exactly one finding of `rule`, an
/// error: the whole report and that finding.
fn lint_error_of(t: &DemoTwin, rule: &str) -> (Value, Value) {
    let out = t.run(&["lint", "--json"]);
    assert_eq!(out.status.code(), Some(1));
    let v = stdout_json(&out);
    let found: Vec<Value> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["rule"] == rule)
        .cloned()
        .collect();
    assert_eq!(found.len(), 1, "{v:#}");
    assert_eq!(found[0]["severity"], "error", "{v:#}");
    let one = found[0].clone();
    (v, one)
}

/// A deleted exchange file leaves a session that still reads: lint fails it (naming the session
/// and the file), synth, check and inspect warn about it.
#[test]
fn lint_reports_a_missing_exchange_file_and_synth_check_inspect_warn() {
    let t = DemoTwin::synthesized();
    let (id, dir) = only_session(&t);
    std::fs::remove_file(dir.join("000002.wrec.zst")).unwrap();

    let (v, found) = lint_error_of(&t, "recording-missing-exchange");
    assert_eq!(found["file"], format!("recordings/sessions/{id}"), "{v:#}");
    let message = found["message"].as_str().unwrap();
    assert!(message.contains(&id), "{message}");
    assert!(message.contains("000002.wrec.zst"), "{message}");
    assert!(message.contains("says 6 exchange(s)"), "{message}");

    for cmd in ["synth", "check", "inspect"] {
        let out = t.run(&[cmd]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains(&format!("warning: session {id}:"))
                && stderr.contains("000002.wrec.zst"),
            "{cmd}: {stderr}"
        );
    }
}

/// A session folder whose manifest names another session (a copied folder): lint fails it,
/// synth warns.
#[test]
fn lint_warns_of_a_session_its_recorder_cut_short() {
    let t = DemoTwin::synthesized();
    let (id, dir) = only_session(&t);
    let out = t.run(&["lint", "--json"]);
    assert!(
        !findings(&stdout_json(&out))
            .iter()
            .any(|(rule, _, _)| rule == "recording-incomplete")
    );
    let manifest = dir.join("manifest.json");
    let mut m: Value = serde_json::from_slice(&std::fs::read(&manifest).unwrap()).unwrap();
    m["complete"] = Value::Bool(false);
    std::fs::write(&manifest, serde_json::to_string(&m).unwrap()).unwrap();
    let out = t.run(&["lint", "--json"]);
    let v = stdout_json(&out);
    let found: Vec<_> = findings(&v)
        .into_iter()
        .filter(|(rule, _, _)| rule == "recording-incomplete")
        .collect();
    assert_eq!(found.len(), 1, "{v:#}");
    assert_eq!(found[0].1, "warning");
    let file = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["rule"] == "recording-incomplete")
        .unwrap()["file"]
        .clone();
    assert_eq!(file, Value::String(format!("recordings/sessions/{id}")));
}

/// A session folder left without a manifest (a recorder killed before it finalized): lint
/// warns, naming the folder and its exchange files, where synth and check read it silently.
#[test]
fn lint_warns_of_a_session_left_without_a_manifest() {
    let t = DemoTwin::synthesized();
    let (id, dir) = only_session(&t);
    std::fs::remove_file(dir.join("manifest.json")).unwrap();
    let out = t.run(&["lint", "--json"]);
    let v = stdout_json(&out);
    let found = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["rule"] == "recording-incomplete")
        .unwrap_or_else(|| panic!("no recording-incomplete finding: {v:#}"))
        .clone();
    assert_eq!(found["severity"], "warning");
    assert_eq!(
        found["file"],
        Value::String(format!("recordings/sessions/{id}"))
    );
    let message = found["message"].as_str().unwrap();
    assert!(
        message.contains("no manifest.json") && message.contains("6 exchange file(s)"),
        "{message}"
    );
}

#[cfg(unix)]
#[test]
fn lint_warns_of_entries_in_the_sessions_folder_that_are_not_sessions() {
    let t = DemoTwin::synthesized();
    let (_, dir) = only_session(&t);
    let sessions = dir.parent().unwrap().to_path_buf();
    std::fs::write(sessions.join("20990101T000000Z-f11e00"), "stray").unwrap();
    std::os::unix::fs::symlink("gone", sessions.join("20990101T000000Z-d4n61e")).unwrap();
    std::fs::write(
        sessions.join(".20990101T000000Z-abc.staging-1"),
        "a writer's",
    )
    .unwrap();
    let out = t.run(&["lint", "--json"]);
    let v = stdout_json(&out);
    let found: Vec<(String, String)> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["rule"] == "recording-not-a-session")
        .map(|f| {
            assert_eq!(f["severity"], "warning");
            (
                f["file"].as_str().unwrap().to_string(),
                f["message"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(found.len(), 2, "{v:#}");
    assert_eq!(found[0].0, "recordings/sessions/20990101T000000Z-d4n61e");
    assert!(
        found[0].1.contains("a symbolic link to nothing"),
        "{}",
        found[0].1
    );
    assert_eq!(found[1].0, "recordings/sessions/20990101T000000Z-f11e00");
    assert!(
        found[1].1.contains("is a file, not a session folder"),
        "{}",
        found[1].1
    );
}

#[test]
fn lint_reports_a_manifest_naming_another_session_and_synth_warns() {
    let t = DemoTwin::synthesized();
    let (id, dir) = only_session(&t);
    let copy = dir.with_file_name("20990101T000000Z-c0ffee");
    std::fs::rename(&dir, &copy).unwrap();

    let (v, found) = lint_error_of(&t, "recording-session-id");
    assert_eq!(
        found["file"], "recordings/sessions/20990101T000000Z-c0ffee",
        "{v:#}"
    );
    assert!(found["message"].as_str().unwrap().contains(&id), "{v:#}");

    let out = t.run(&["synth"]);
    assert!(out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("warning: session 20990101T000000Z-c0ffee:") && stderr.contains(&id),
        "{stderr}"
    );
}

/// `check` refuses the twin (exit 4) and `lint` fails it under `rule`, filed under the session
/// `id`: the lint document and the finding's message.
fn refused_by_check_and_named_by_lint(t: &DemoTwin, id: &str, rule: &str) -> (Value, String) {
    let check = t.run(&["check"]);
    assert_eq!(
        check.status.code(),
        Some(4),
        "{}",
        String::from_utf8_lossy(&check.stderr)
    );
    let (v, found) = lint_error_of(t, rule);
    assert_eq!(found["file"], format!("recordings/sessions/{id}"), "{v:#}");
    let message = found["message"].as_str().unwrap().to_string();
    (v, message)
}

/// A damaged `manifest.json` stops `check` (exit 4), so `lint` must not pass the twin: it fails
/// it under `recording-manifest`, naming the session and how to fix it.
#[test]
fn lint_fails_a_damaged_session_manifest_that_check_refuses() {
    let t = DemoTwin::synthesized();
    let (id, dir) = only_session(&t);
    std::fs::write(dir.join("manifest.json"), "{\"session_id\": ").unwrap();

    let (_, message) = refused_by_check_and_named_by_lint(&t, &id, "recording-manifest");
    assert!(
        message.contains(&id) && message.contains("manifest.json"),
        "{message}"
    );
    assert!(message.contains("delete the file"), "{message}");
}

/// A manifest of another `schema_version` is not read as if its fields meant what version 1's
/// do: `check` stops on it and `lint` fails it, saying which versions it reads.
#[test]
fn lint_fails_a_session_manifest_of_another_schema_version() {
    let t = DemoTwin::synthesized();
    let (id, dir) = only_session(&t);
    let path = dir.join("manifest.json");
    let mut manifest: Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    manifest["schema_version"] = 2.into();
    std::fs::write(&path, manifest.to_string()).unwrap();

    let (_, message) = refused_by_check_and_named_by_lint(&t, &id, "recording-manifest");
    assert!(
        message.contains("schema_version 2 is not one this wraith reads (1)"),
        "{message}"
    );
}

#[test]
fn lint_fails_a_truncated_exchange_file_that_check_refuses() {
    let t = DemoTwin::synthesized();
    let (id, dir) = only_session(&t);
    let file = dir.join("000002.wrec.zst");
    let bytes = std::fs::read(&file).unwrap();
    std::fs::write(&file, &bytes[..bytes.len() / 2]).unwrap();

    let (v, message) = refused_by_check_and_named_by_lint(&t, &id, "recording-exchange");
    assert!(
        message.contains(&id) && message.contains("000002.wrec.zst cannot be read"),
        "{message}"
    );
    let others = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["rule"] == "recording-exchange")
        .count();
    assert_eq!(others, 1, "only the damaged file: {v:#}");
}

#[test]
fn lint_warns_of_a_lua_string_naming_a_model_field_in_another_letter_case() {
    let t = DemoTwin::synthesized();
    std::fs::create_dir_all(t.root.join("lua/handlers")).unwrap();
    std::fs::write(
        t.root.join("lua/handlers/get_customer.lua"),
        "local c = state.get(\"customers\", req.params.id)\n\
         -- \"Plan\" in a comment is not read\n\
         return { plan = c[\"Plan\"], id = c[\"id\"], note = \"Status page\",\n\
                  license = c.licenseAgreementID, lic = c['licenseAgreementId'] }\n",
    )
    .unwrap();
    let out = t.run(&["lint", "--json"]);
    assert_eq!(out.status.code(), Some(0), "warnings only");
    let got: Vec<(String, String, String)> = findings(&stdout_json(&out))
        .into_iter()
        .filter(|(r, _, _)| r == "lua-field-case")
        .collect();
    assert_eq!(got.len(), 2, "{got:#?}");
    assert!(
        got[0].2.starts_with("line 3: the string \"Plan\"")
            && got[0].2.contains("\"plan\" (of customers)"),
        "{got:#?}"
    );
    assert!(
        got[1]
            .2
            .starts_with("line 4: the string \"licenseAgreementId\"")
            && got[1].2.contains("\"licenseAgreementID\""),
        "{got:#?}"
    );
    assert!(got.iter().all(|(_, s, _)| s == "warning"));
}

#[test]
fn inspect_provenance_lists_what_each_route_can_answer_from() {
    let t = DemoTwin::synthesized();
    let out = t.run(&["inspect", "--provenance", "--json"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v = stdout_json(&out);
    let routes = v["routes"].as_array().unwrap();
    assert!(!routes.is_empty());
    for r in routes {
        // Every demo route was recorded, so every route can replay a recording.
        assert!(r["exact_requests"].as_u64().unwrap() >= 1, "{r:#}");
        let can: Vec<&str> = r["can_answer"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_str().unwrap())
            .collect();
        assert!(
            can.contains(&"recorded") && can.contains(&"template"),
            "{r:#}"
        );
    }
}

/// Every `--json` printout is canonical JSON (keys sorted, compact, one trailing newline), the
/// form of every file Wraith writes, so `--json > file` writes such a file.
#[test]
fn every_json_printout_is_canonical_json() {
    let t = DemoTwin::synthesized();
    for args in [
        &["check", "--json"][..],
        &["coverage", "--json"],
        &["lint", "--json"],
        &["inspect", "--json"],
        &["inspect", "--provenance", "--json"],
        &["synth", "--json"],
    ] {
        let out = t.run(args);
        let text = String::from_utf8(out.stdout).unwrap();
        let value: Value = serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("{args:?} printed no JSON ({e}): {text}"));
        assert_eq!(
            text,
            wraith_model::to_canonical_json(&value).unwrap(),
            "{args:?} prints canonical JSON"
        );
    }
}

/// A fixture set whose parent chain comes back to it: `serve` and `check` refuse the twin, so
/// the lint fails it too, naming the file.
#[test]
fn lint_fails_a_fixture_parent_chain_that_loops() {
    let t = DemoTwin::synthesized();
    for (set, parent) in [("b", "c"), ("c", "b")] {
        let dir = t.root.join("state/fixtures").join(set);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("fixture.json"),
            format!(r#"{{"parent": "{parent}", "entities": {{}}}}"#),
        )
        .unwrap();
    }
    let (_, finding) = lint_error_of(&t, "fixture-parent-cycle");
    // Resolving `b` walks to `c`, whose parent is `b` again.
    assert_eq!(
        finding["file"], "state/fixtures/c/fixture.json",
        "{finding}"
    );
    let message = finding["message"].as_str().unwrap();
    assert!(message.contains("loops back to `b`"), "{message}");
}

/// The model, symbols and schema must be UTF-8: the commands that read them refuse them
/// otherwise, so the lint names each one that is not, with the offset of its first bad byte.
#[test]
fn lint_fails_model_symbols_and_schema_files_that_are_not_utf8() {
    let t = DemoTwin::synthesized();
    for rel in [
        "model/twin.wir.json",
        "model/symbols.json",
        "state/schema.json",
    ] {
        let path = t.root.join(rel);
        let original = std::fs::read(&path).unwrap();
        let mut bytes = original.clone();
        // Inside the first string, so the JSON still parses once read with replacements.
        let at = bytes.iter().position(|b| *b == b'"').unwrap() + 1;
        bytes[at] = 0xff;
        std::fs::write(&path, bytes).unwrap();
        let (_, finding) = lint_error_of(&t, "not-utf8");
        assert_eq!(finding["file"], rel, "{finding}");
        let message = finding["message"].as_str().unwrap();
        assert!(message.contains(&format!("offset {at}")), "{message}");
        std::fs::write(&path, original).unwrap();
    }
}

/// A file where the folder of recording sessions belongs: what every command that reads the
/// recordings refuses is a lint error.
#[test]
fn lint_fails_a_file_where_the_sessions_folder_belongs() {
    let t = DemoTwin::synthesized();
    let dir = t.root.join("recordings/sessions");
    std::fs::remove_dir_all(&dir).unwrap();
    std::fs::write(&dir, b"not a folder").unwrap();
    let (_, finding) = lint_error_of(&t, "recordings-folder");
    assert_eq!(finding["file"], "recordings/sessions", "{finding}");
}

/// `scrub.toml`'s `[pii]` section as `serve` and `check` read it: an unknown key they warn of
/// and ignore is a lint warning, a key of the wrong type they refuse is a lint error.
#[test]
fn lint_reports_the_pii_section_as_serve_and_check_read_it() {
    let t = DemoTwin::synthesized();
    let scrub = t.root.join("scrub.toml");
    let policy = std::fs::read_to_string(&scrub).unwrap();
    assert!(policy.contains("\ndetect = true\n"), "{policy}");
    let edited = policy.replace("\ndetect = true\n", "\ndetect = true\nenabled = \"yes\"\n");
    std::fs::write(&scrub, edited).unwrap();
    let out = t.run(&["lint", "--json"]);
    let v = stdout_json(&out);
    let warned: Vec<&Value> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["rule"] == "scrub_toml" && f["message"].as_str().unwrap().contains("enabled"))
        .collect();
    assert_eq!(warned.len(), 1, "{v:#}");
    assert_eq!(warned[0]["severity"], "warning", "{v:#}");
    assert_eq!(warned[0]["file"], "scrub.toml", "{v:#}");
    let message = warned[0]["message"].as_str().unwrap();
    assert!(
        message.starts_with("[pii] has an unknown key `enabled`"),
        "{message}"
    );

    let edited = policy.replace("\ndetect = true\n", "\ndetect = \"yes\"\n");
    std::fs::write(&scrub, edited).unwrap();
    let out = t.run(&["lint", "--json"]);
    assert_eq!(out.status.code(), Some(1));
    let v = stdout_json(&out);
    let refused = v["findings"].as_array().unwrap().iter().any(|f| {
        f["rule"] == "scrub_toml"
            && f["severity"] == "error"
            && f["message"]
                .as_str()
                .unwrap()
                .contains("[pii] detect must be true or false")
    });
    assert!(refused, "{v:#}");
}

/// A manifest counting fewer exchanges than its folder holds: lint fails it, the commands that
/// read the recordings warn of it and use every file present.
#[test]
fn lint_reports_a_manifest_counting_fewer_exchanges_than_its_folder_holds() {
    let t = DemoTwin::synthesized();
    let (id, dir) = only_session(&t);
    let manifest = dir.join("manifest.json");
    let text = std::fs::read_to_string(&manifest).unwrap();
    assert!(text.contains("\"exchange_count\":6"), "{text}");
    std::fs::write(
        &manifest,
        text.replace("\"exchange_count\":6", "\"exchange_count\":2"),
    )
    .unwrap();
    let (v, found) = lint_error_of(&t, "recording-manifest-count");
    assert_eq!(found["file"], format!("recordings/sessions/{id}"), "{v:#}");
    let message = found["message"].as_str().unwrap();
    assert!(
        message.contains("says 2 exchange(s)") && message.contains("set exchange_count to 6"),
        "{message}"
    );
    let out = t.run(&["inspect", "--json"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!("warning: session {id}:")),
        "{stderr}"
    );
    assert_eq!(out.status.code(), Some(0), "{stderr}");
}

/// A manifest that says its session ended before it started: lint fails it, the commands that
/// read the recordings warn of it and go on.
#[test]
fn lint_reports_a_manifest_ending_before_it_starts() {
    let t = DemoTwin::synthesized();
    let (id, dir) = only_session(&t);
    let manifest = dir.join("manifest.json");
    let mut m: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&manifest).unwrap()).unwrap();
    let start = m["start_time_us"].as_u64().unwrap();
    m["end_time_us"] = serde_json::json!(start - 5);
    std::fs::write(&manifest, serde_json::to_vec(&m).unwrap()).unwrap();
    let (v, found) = lint_error_of(&t, "recording-manifest-times");
    assert_eq!(found["file"], format!("recordings/sessions/{id}"), "{v:#}");
    let message = found["message"].as_str().unwrap();
    assert!(
        message.contains(&format!(
            "ended (end_time_us {}) before it started (start_time_us {start})",
            start - 5
        )),
        "{message}"
    );
    let out = t.run(&["inspect", "--json"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!(
            "warning: session {id}: manifest.json says the session ended"
        )),
        "{stderr}"
    );
    assert_eq!(out.status.code(), Some(0), "{stderr}");
}

/// A session folder with no exchange, made by hand or a link back to the folder of sessions:
/// lint warns of each (every command leaves them out, as check warns) and still passes.
#[test]
fn lint_warns_of_a_session_folder_without_exchanges() {
    let t = DemoTwin::synthesized();
    let sessions = t.root.join("recordings/sessions");
    std::fs::create_dir(sessions.join("empty")).unwrap();
    std::os::unix::fs::symlink(".", sessions.join("loop")).unwrap();
    let out = t.run(&["lint", "--json"]);
    let v = stdout_json(&out);
    assert_eq!(out.status.code(), Some(0), "{v:#}");
    let empty: Vec<&Value> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["rule"] == "recording-empty")
        .collect();
    assert_eq!(empty.len(), 2, "{v:#}");
    assert_eq!(empty[0]["file"], "recordings/sessions/empty", "{v:#}");
    assert_eq!(empty[1]["file"], "recordings/sessions/loop", "{v:#}");
    for f in &empty {
        assert_eq!(f["severity"], "warning", "{v:#}");
        assert!(
            f["message"]
                .as_str()
                .unwrap()
                .contains("holds no exchange files"),
            "{v:#}"
        );
    }
    // The recorded session is not among them.
    assert!(
        !v["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["rule"] == "recording-incomplete"),
        "{v:#}"
    );
}

/// An exchange file the manifest counts that is not there: coverage counts the exchanges that
/// are, and warns on stderr of the missing one in the words inspect uses.
#[test]
fn coverage_warns_of_a_missing_exchange_file_as_inspect_does() {
    let t = DemoTwin::synthesized();
    let (id, dir) = only_session(&t);
    std::fs::remove_file(dir.join("000003.wrec.zst")).unwrap();
    let session_warnings = |cmd: &str| -> Vec<String> {
        let out = t.run(&[cmd]);
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        assert_eq!(out.status.code(), Some(0), "{cmd}: {err}");
        err.lines()
            .filter(|l| l.starts_with("warning: session "))
            .map(str::to_string)
            .collect()
    };
    let coverage = session_warnings("coverage");
    assert_eq!(coverage.len(), 1, "{coverage:#?}");
    assert!(
        coverage[0].contains(&id) && coverage[0].contains("000003.wrec.zst"),
        "{coverage:#?}"
    );
    assert_eq!(coverage, session_warnings("inspect"));
    assert_eq!(stdout_json(&t.run(&["coverage", "--json"]))["exchanges"], 5);
}
