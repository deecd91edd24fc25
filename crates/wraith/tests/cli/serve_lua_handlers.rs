//! Lua handlers over HTTP: binding by file name, provenance `handler`, the store shared with the
//! CRUD engine, the 500 envelope and `on_error = "fallback"`, budgets from `[serve.lua]`, the
//! seeded RNG and session clock, and the startup log. Black-box: the real binary on 127.0.0.1.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::json;
use support::{Twin, model};

fn shop_with(handlers: &[(&str, &str)]) -> Twin {
    let t = Twin::init("shop", "https://api.shop.test");
    t.write_model(&model::shop("shop"));
    for (name, src) in handlers {
        t.write(&format!("lua/handlers/{name}"), src);
    }
    t
}

#[tokio::test]
async fn a_bound_handler_answers_with_provenance_handler_and_serve_logs_the_binding() {
    let t = shop_with(&[(
        "get_customer.lua",
        r#"return { id = req.params.id, via = "lua", method = req.method }"#,
    )]);
    let s = t.serve(&[]);
    let r = s.get("/v1/customers/cus_new", None).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.provenance(), Some("handler"));
    assert_eq!(r.header("x-wraith-route"), Some("GET /v1/customers/:id"));
    assert_eq!(r.header("content-type"), Some("application/json"));
    assert_eq!(
        r.json(),
        json!({"id": "cus_new", "via": "lua", "method": "GET"})
    );
    assert!(
        s.stderr()
            .contains("handler lua/handlers/get_customer.lua → GET /v1/customers/:id"),
        "{}",
        s.stderr()
    );
    // A collection read never binds a singular handler: the list route is untouched.
    let list = s.get("/v1/customers", None).await;
    assert_ne!(list.provenance(), Some("handler"));
    // The exact recorded request is still replayed verbatim (exact replay comes first).
    let recorded = s.get("/v1/customers/cus_1", None).await;
    assert_eq!(recorded.provenance(), Some("recorded"));
}

#[tokio::test]
async fn a_handler_sends_a_header_once_per_value_of_a_sequence() {
    let t = shop_with(&[(
        "get_customer.lua",
        r#"emit.header("Set-Cookie", { "a=1; Path=/", "b=2" })
           emit.json({ id = req.params.id })"#,
    )]);
    let s = t.serve(&[]);
    let r = s.get("/v1/customers/cus_new", None).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.provenance(), Some("handler"));
    assert_eq!(
        r.headers.get("set-cookie"),
        Some(&vec!["a=1; Path=/".to_string(), "b=2".to_string()])
    );
}

#[tokio::test]
async fn handlers_and_synthesized_routes_share_the_session_store() {
    let t = shop_with(&[(
        "update_customer.lua",
        r#"local before = state.get("customers", req.params.id)
           local stored = state.put("customers", req.params.id, req.json)
           return { before = before, stored = stored }"#,
    )]);
    let s = t.serve(&[]);
    // Created by the synthesized create route, seen by the handler.
    let created = s
        .post("/v1/customers", Some("s1"), json!({"name": "Grace"}))
        .await;
    assert_eq!(
        created.status,
        200,
        "{:?}",
        String::from_utf8_lossy(&created.body)
    );
    let id = created.json()["id"].as_str().unwrap().to_string();
    let patched = s
        .send(
            "PATCH",
            &format!("/v1/customers/{id}"),
            Some("s1"),
            &[],
            Some(json!({"name": "Grace H."})),
        )
        .await;
    assert_eq!(patched.provenance(), Some("handler"));
    let body = patched.json();
    assert_eq!(body["before"]["name"], "Grace");
    assert_eq!(body["stored"]["name"], "Grace H.");
    assert_eq!(body["stored"]["id"], id.as_str());
    // Written by the handler, read by the synthesized read route.
    let read = s.get(&format!("/v1/customers/{id}"), Some("s1")).await;
    assert_eq!(read.status, 200);
    assert_ne!(read.provenance(), Some("handler"));
    assert_eq!(read.json()["name"], "Grace H.");
    // Another session does not see it.
    let other = s.get(&format!("/v1/customers/{id}"), Some("s2")).await;
    assert_eq!(other.status, 404);
}

#[tokio::test]
async fn a_failing_handler_answers_the_500_internal_error_envelope() {
    let t = shop_with(&[
        ("get_product.lua", "error('boom')"),
        (
            "list_repos.lua",
            r#"state.put("widgets", "w1", { a = 1 }) return {}"#,
        ),
    ]);
    let s = t.serve(&[]);
    let r = s.get("/v1/products/p1", None).await;
    assert_eq!(r.status, 500);
    assert_eq!(r.header("x-wraith-route"), Some("GET /v1/products/:id"));
    // `handler` is a handler's successful return; the failure is the engine's own answer.
    assert_eq!(r.provenance(), Some("miss"));
    assert_eq!(
        r.json(),
        json!({"error": {"type": "internal_error",
                         "message": "Handler execution failed: lua/handlers/get_product.lua:1: boom",
                         "handler": "get_product"}})
    );
    let r = s.get("/v1/orgs/acme/repos", None).await;
    assert_eq!(r.status, 500);
    let b = r.json();
    assert_eq!(b["error"]["handler"], "list_repos");
    let msg = b["error"]["message"].as_str().unwrap();
    assert!(
        msg.contains("entity type `widgets` is not declared"),
        "{msg}"
    );
}

/// A handler that fails part way leaves the session as it found it: its writes, counter steps
/// and clock readings are undone, whether the failure answers the 500 envelope or falls back
/// to the template (which would otherwise store its own record beside the handler's ghost).
#[tokio::test]
async fn a_failing_handler_leaves_no_writes_behind() {
    let failing = r#"state.put("customers", "cus_ghost", { name = "half" })
state.counter("steps")
clock.now()
error("boom")"#;
    let probe = r#"return { ghost = state.get("customers", "cus_ghost") ~= nil,
                 steps = state.counter("steps"), now = clock.now() }"#;
    for on_error in ["fail", "fallback"] {
        let t = shop_with(&[("get_product.lua", failing), ("list_repos.lua", probe)]);
        t.set_toml("serve.lua", "on_error", &format!("\"{on_error}\""));
        t.set_toml("serve.clock", "mode", "\"deterministic\"");
        let s = t.serve(&[]);
        let failed = s.get("/v1/products/p1", Some("agent")).await;
        let expected = if on_error == "fail" { 500 } else { 200 };
        assert_eq!(failed.status, expected, "{on_error}");
        let fresh = s.get("/v1/orgs/acme/repos", Some("fresh")).await;
        let after = s.get("/v1/orgs/acme/repos", Some("agent")).await;
        assert_eq!(after.status, 200, "{on_error}");
        assert_eq!(after.json()["ghost"], json!(false), "{on_error}");
        assert_eq!(after.json()["steps"], json!(1), "{on_error}");
        if on_error == "fail" {
            // Nothing else read the clock: the session's next reading is its first.
            assert_eq!(after.json()["now"], fresh.json()["now"]);
        }
    }
}

#[tokio::test]
async fn clock_advance_past_the_last_date_fails_the_handler_and_leaves_the_clock() {
    let t = shop_with(&[
        (
            "get_product.lua",
            "clock.advance(tonumber(req.query.secs)) return { now = clock.now() }",
        ),
        ("list_repos.lua", "return { now = clock.now() }"),
    ]);
    t.set_toml("serve.clock", "mode", "\"fixed\"");
    let s = t.serve(&[]);
    let before = s.get("/v1/orgs/acme/repos", Some("a")).await;
    let start = before.json()["now"].as_i64().unwrap();
    for secs in ["1e300", "1e12"] {
        let r = s
            .get(&format!("/v1/products/p1?secs={secs}"), Some("a"))
            .await;
        assert_eq!(r.status, 500, "{secs}");
        let message = r.json()["error"]["message"].as_str().unwrap().to_string();
        assert!(
            message.contains("clock.advance") && message.contains("9999"),
            "{message}"
        );
    }
    // The clock did not move, and a day still passes.
    let after = s.get("/v1/orgs/acme/repos", Some("a")).await;
    assert_eq!(after.json()["now"].as_i64(), Some(start));
    let day = s.get("/v1/products/p1?secs=86400", Some("a")).await;
    assert_eq!(day.status, 200);
    assert_eq!(day.json()["now"].as_i64(), Some(start + 86_400));
}

#[tokio::test]
async fn on_error_fallback_answers_with_the_template() {
    let t = shop_with(&[("get_product.lua", "error('boom')")]);
    t.set_toml("serve.lua", "on_error", "\"fallback\"");
    let s = t.serve(&[]);
    let r = s.get("/v1/products/p1", None).await;
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    assert_eq!(r.provenance(), Some("template"));
}

#[tokio::test]
async fn runaway_handlers_are_stopped_by_their_budgets() {
    let t = shop_with(&[
        ("get_product.lua", "while true do end"),
        (
            "list_repos.lua",
            r#"local t = {} for i = 1, 50000 do t[i] = string.rep("x", 100) .. i end return {}"#,
        ),
    ]);
    t.set_toml("serve.lua", "max_memory_kb", "64");
    let s = t.serve(&[]);
    let r = s.get("/v1/products/p1", None).await;
    assert_eq!(r.status, 500);
    let msg = r.json()["error"]["message"].as_str().unwrap().to_string();
    assert!(msg.contains("budget"), "{msg}");
    let r = s.get("/v1/orgs/acme/repos", None).await;
    assert_eq!(r.status, 500);
    let msg = r.json()["error"]["message"].as_str().unwrap().to_string();
    assert!(msg.contains("memory budget of 64 KiB"), "{msg}");
    // The server keeps serving.
    assert_eq!(s.get("/v1/customers/cus_1", None).await.status, 200);
}

/// A handler's value graph can name one string many times while staying under Lua's memory
/// budget; writing it out on the Rust side is held to 16 × `max_memory_kb`, so the request
/// fails with the handler's error instead of taking the host's memory.
#[tokio::test]
async fn a_small_value_naming_one_string_many_times_fails_the_handler_not_the_host() {
    let t = shop_with(&[
        (
            "get_product.lua",
            r#"local s = string.rep("x", 400000)
               return table.create(tonumber(req.query.n), s)"#,
        ),
        (
            "list_repos.lua",
            r#"local s = string.rep("x", 400000)
               emit.header("x-big", table.create(tonumber(req.query.n), s))
               return {}"#,
        ),
    ]);
    let s = t.serve(&[]);
    for path in ["/v1/products/p1?n=20000", "/v1/orgs/acme/repos?n=20000"] {
        let r = s.get(path, None).await;
        assert_eq!(r.status, 500, "{path}");
        assert_eq!(r.provenance(), Some("miss"), "{path}");
        let msg = r.json()["error"]["message"].as_str().unwrap().to_string();
        assert!(
            msg.contains("the value takes more than 16384 KiB once converted"),
            "{path}: {msg}"
        );
    }
    // Under the limit the same handler answers, and the server keeps serving.
    let r = s.get("/v1/products/p1?n=3", None).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.json().as_array().map(Vec::len), Some(3));
    assert_eq!(s.get("/v1/customers/cus_1", None).await.status, 200);
}

/// A value Lua would name by its memory address is named by the order the handler first
/// names it, so one session's answer does not change with what other sessions sent before it.
#[tokio::test]
async fn tostring_answers_do_not_depend_on_other_sessions_traffic() {
    let t = shop_with(&[(
        "get_product.lua",
        r#"local t = {}
           return { t = tostring(t), f = tostring(print), both = `{t} {print}`,
                    co = tostring(coroutine.create(function() end)) }"#,
    )]);
    let s = t.serve(&[]);
    let first = s.get("/v1/products/p1", Some("a")).await;
    assert_eq!(first.status, 200);
    for _ in 0..5 {
        s.post("/v1/customers", Some("other"), json!({"name": "x"}))
            .await;
        s.get("/v1/products/p2", Some("other")).await;
    }
    let later = s.get("/v1/products/p1", Some("b")).await;
    assert_eq!(later.json(), first.json());
    assert_eq!(
        first.json(),
        json!({"t": "table: #1", "f": "function: #2", "both": "table: #1 function: #2",
               "co": "thread: #3"})
    );
}

#[tokio::test]
async fn randomness_and_time_come_from_the_session_seed_and_clock() {
    let t = shop_with(&[(
        "get_product.lua",
        r#"return { r = math.random(1000000000), t = os.time(), now = clock.now(),
                    stamp = os.date("!%Y-%m-%dT%H:%M:%SZ") }"#,
    )]);
    let args = [
        "--seed",
        "7",
        "--clock",
        "deterministic",
        "--clock-epoch",
        "1700000000",
    ];
    let a = t.serve(&args);
    let first = a.get("/v1/products/p1", Some("alice")).await.json();
    assert_eq!(first["t"], 1_700_000_000);
    assert_eq!(first["now"], 1_700_000_001);
    // os.date reads the same session clock (its third reading), in UTC.
    assert_eq!(first["stamp"], "2023-11-14T22:13:22Z");
    let other_session = a.get("/v1/products/p1", Some("bob")).await.json();
    drop(a);
    let b = t.serve(&args);
    let again = b.get("/v1/products/p1", Some("alice")).await.json();
    assert_eq!(first, again, "same seed, session and clock: same answer");
    assert_ne!(
        first["r"], other_session["r"],
        "each session has its own RNG"
    );
}

#[test]
fn a_handler_that_binds_nothing_is_warned_about_at_startup() {
    let t = shop_with(&[("get_widget.lua", "return {}")]);
    let s = t.serve(&[]);
    let err = s.stderr();
    assert!(
        err.contains("Lua handler `get_widget` binds no route"),
        "{err}"
    );
}

#[test]
fn a_handler_that_does_not_compile_refuses_to_serve() {
    let t = shop_with(&[("get_product.lua", "return {")]);
    let (code, err) = t.serve_expect_exit(&[]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("get_product.lua") && err.contains("does not compile"),
        "{err}"
    );
}

#[tokio::test]
async fn debug_counts_the_fields_a_handler_wrote() {
    let t = shop_with(&[("get_product.lua", "return { a = 1, b = { c = 2, d = 3 } }")]);
    let s = t.serve(&["--debug"]);
    let r = s.get("/v1/products/p1", None).await;
    assert_eq!(r.provenance(), Some("handler"));
    assert_eq!(
        r.header("x-wraith-provenance-counts"),
        Some("recorded=0 template=0 fixture=0 handler=3")
    );
}

#[tokio::test]
async fn an_explicit_binding_binds_a_handler_whose_name_matches_no_convention() {
    let t = shop_with(&[
        (
            "customer_view.lua",
            r#"return { id = req.params.id, via = "customer_view" }"#,
        ),
        // The convention would bind this one to the same route: the explicit binding wins.
        ("get_customer.lua", r#"return { via = "get_customer" }"#),
        ("probe.lua", r#"return { ok = true }"#),
    ]);
    t.write(
        "lua/routes.toml",
        "schema_version = 1\n\
         [[route]]\nmethod = \"GET\"\npath = \"/v1/health\"\nhandler = \"probe\"\n\
         [[binding]]\nmethod = \"GET\"\npath = \"/v1/customers/:param\"\n\
         handler = \"customer_view\"\n",
    );
    let s = t.serve(&[]);
    let r = s.get("/v1/customers/cus_new", None).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.provenance(), Some("handler"));
    assert_eq!(r.header("x-wraith-route"), Some("GET /v1/customers/:id"));
    assert_eq!(r.json(), json!({"id": "cus_new", "via": "customer_view"}));
    let err = s.stderr();
    assert!(
        err.contains("handler lua/handlers/customer_view.lua → GET /v1/customers/:id (explicit)"),
        "{err}"
    );
    assert!(
        !err.contains("handler lua/handlers/get_customer.lua → GET /v1/customers/:id"),
        "{err}"
    );
    // The displaced handler is warned of with the binding that displaced it, not as a typo.
    assert!(
        err.contains(
            "Lua handler `get_customer` binds no route: its file name matches \
             GET /v1/customers/:id, which a [[binding]] in lua/routes.toml gives to \
             `customer_view`"
        ),
        "{err}"
    );
    // An authored route's own `handler` key binds it the same way.
    let r = s.get("/v1/health", None).await;
    assert_eq!(r.provenance(), Some("handler"));
    assert_eq!(r.json(), json!({"ok": true}));
    assert!(
        err.contains("handler lua/handlers/probe.lua → GET /v1/health (authored, explicit)"),
        "{err}"
    );
}

#[test]
fn a_binding_to_a_missing_handler_or_an_unknown_route_refuses_to_serve() {
    let t = shop_with(&[("customer_view.lua", "return {}")]);
    t.write(
        "lua/routes.toml",
        "[[binding]]\nmethod = \"GET\"\npath = \"/v1/customers/:id\"\nhandler = \"nope\"\n",
    );
    let (code, err) = t.serve_expect_exit(&[]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("lua/routes.toml [[binding]] #1")
            && err.contains("lua/handlers/nope.lua")
            && err.contains("customer_view"),
        "{err}"
    );
    t.write(
        "lua/routes.toml",
        "[[binding]]\nmethod = \"GET\"\npath = \"/v1/customers/cus_1\"\n\
         handler = \"customer_view\"\n",
    );
    let (code, err) = t.serve_expect_exit(&[]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("lua/routes.toml [[binding]] #1")
            && err.contains("no recorded or authored route is GET /v1/customers/cus_1")
            && err.contains("did you mean GET /v1/customers/:id"),
        "{err}"
    );
}

/// A session's namespace stays locked while its handler runs, and one long library call
/// (a plain `string.find` of a long needle) runs past the deadline before the budget can stop
/// it. Control calls waiting for that session run off the async workers, so health and other
/// sessions answer before the busy session's handler does.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn control_calls_waiting_on_a_busy_session_do_not_hold_up_the_server() {
    let t = shop_with(&[(
        "get_customer.lua",
        r#"local s = string.rep("a", 600000)
local p = string.rep("a", 300000) .. "b"
return { found = string.find(s, p, 1, true) ~= nil }"#,
    )]);
    t.set_toml("serve.lua", "max_memory_kb", "4096");
    let s = t.serve(&[]);
    let send = |method: reqwest::Method, path: &str, session: Option<&str>| {
        let mut rb = s.client.request(method, format!("{}{path}", s.url));
        if let Some(id) = session {
            rb = rb.header("X-Wraith-Session", id);
        }
        tokio::spawn(async move {
            let r = rb.send().await.unwrap();
            let status = r.status().as_u16();
            let _ = r.bytes().await;
            (status, std::time::Instant::now())
        })
    };
    let slow = send(reqwest::Method::GET, "/v1/customers/cus_busy", Some("busy"));
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    // More waiting control calls than the server has async workers.
    let waiting: Vec<_> = (0..4)
        .map(|_| send(reqwest::Method::POST, "/__wraith/session/busy/reset", None))
        .collect();
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    let health = send(reqwest::Method::GET, "/__wraith/health", None);
    let other = send(reqwest::Method::GET, "/v1/customers", Some("other"));
    let (health, health_at) = health.await.unwrap();
    let (other, other_at) = other.await.unwrap();
    let (slow, slow_at) = slow.await.unwrap();
    assert_eq!((health, other, slow), (200, 200, 500));
    // The search takes seconds; answers that waited for it come within moments of its end.
    let margin = std::time::Duration::from_millis(1000);
    assert!(
        health_at + margin < slow_at && other_at + margin < slow_at,
        "health and another session waited for the busy session's handler"
    );
    for w in waiting {
        assert_eq!(w.await.unwrap().0, 200);
    }
}

/// SIGTERM while a handler is inside one long library call: serve stops once the drain
/// timeout has passed, not when the call ends.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_stops_serve_after_the_drain_timeout_while_a_handler_still_runs() {
    let t = shop_with(&[(
        "get_customer.lua",
        r#"local s = string.rep("a", 800000)
local p = string.rep("a", 400000) .. "b"
return { found = string.find(s, p, 1, true) ~= nil }"#,
    )]);
    t.set_toml("serve.lua", "max_memory_kb", "4096");
    t.set_toml("serve.limits", "request_drain_timeout_ms", "100");
    let mut s = t.serve(&[]);
    let rb = s
        .client
        .get(format!("{}/v1/customers/cus_busy", s.url))
        .header("X-Wraith-Session", "busy");
    let slow = tokio::spawn(async move { rb.send().await.is_ok() });
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    let stopped = tokio::task::spawn_blocking(move || {
        let sent = std::time::Instant::now();
        let code = s.terminate();
        (code, sent.elapsed(), s.stderr())
    });
    let (code, took, stderr) = stopped.await.unwrap();
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("drain timeout"), "{stderr}");
    // The search takes several seconds; serve stops within moments of the drain timeout.
    assert!(
        took < std::time::Duration::from_millis(2000),
        "serve took {took:?} to stop: it waited for the handler's call to end"
    );
    let _ = slow.await;
}

/// Synth names a recorded route's parameters `param`, `param2`, …: a handler bound by file name
/// to `GET /customers/:param` still reads the id as `req.params.id` (the last parameter), and
/// one an explicit binding binds reads the binding's own names.
#[test]
fn a_handler_on_a_recorded_route_reads_id_and_its_bindings_parameter_names() {
    use crate::check_support::{DemoTwin, http_get};
    let t = DemoTwin::example_shop();
    std::fs::write(
        t.root.join("lua/handlers/get_customer.lua"),
        "return { id = req.params.id, param = req.params.param }",
    )
    .unwrap();
    std::fs::write(
        t.root.join("lua/handlers/order_view.lua"),
        "return { order = req.params.order_id, id = req.params.id }",
    )
    .unwrap();
    let routes = t.root.join("lua/routes.toml");
    let mut text = std::fs::read_to_string(&routes).unwrap();
    text.push_str(
        "\n[[binding]]\nmethod = \"GET\"\npath = \"/orders/:order_id\"\nhandler = \"order_view\"\n",
    );
    std::fs::write(&routes, text).unwrap();
    t.synth();
    let (mut child, url) = t.serve();
    let (head, customer) = http_get(&format!("{url}/customers/cus_unrecorded"));
    let (_, order) = http_get(&format!("{url}/orders/ord_unrecorded"));
    let _ = child.kill();
    let _ = child.wait();
    assert!(head.contains("x-wraith-provenance: handler"), "{head}");
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&customer).unwrap(),
        json!({"id": "cus_unrecorded", "param": "cus_unrecorded"})
    );
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&order).unwrap(),
        json!({"order": "ord_unrecorded", "id": "ord_unrecorded"})
    );
}
