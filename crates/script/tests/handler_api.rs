//! Every function of the handler API: `req`, `emit`, `state`, `clock`, `wraith.*`, and the
//! deterministic `math.random` / `os.time` / `os.clock` / `os.date`.
#![allow(clippy::unwrap_used)]

mod support;

use serde_json::{Value, json};
use support::*;
use wraith_engine::HandlerBody;

#[test]
fn req_exposes_method_path_lowercase_headers_query_params_body_and_json() {
    let req = Req::post("/customers/cus_1/notes", json!({"text": "hi", "n": 3}))
        .param("id", "cus_1")
        .query("expand", "orders")
        .query("expand", "ignored")
        .header("X-Trace", "a")
        .header("x-trace", "b");
    let mut env = FakeEnv::new(&[]);
    let out = run_json(
        r#"return {
            method = req.method, path = req.path, id = req.params.id,
            expand = req.query.expand, trace = req.headers["x-trace"],
            ct = req.headers["content-type"], body = req.body,
            text = req.json.text, n = req.json.n + 1,
        }"#,
        &req,
        &mut env,
    );
    assert_eq!(
        out,
        json!({"method": "POST", "path": "/customers/cus_1/notes", "id": "cus_1",
               "expand": "orders", "trace": "a, b", "ct": "application/json",
               "body": "{\"text\":\"hi\",\"n\":3}", "text": "hi", "n": 4})
    );
}

#[test]
fn req_query_all_holds_every_value_of_a_repeated_parameter_in_order() {
    let req = Req::get("/items")
        .query("tag", "a")
        .query("page", "2")
        .query("tag", "b");
    let mut env = FakeEnv::new(&[]);
    let out = run_json(
        "return { first = req.query.tag, tags = req.query_all.tag, pages = req.query_all.page, \
                  none = req.query_all.missing == nil }",
        &req,
        &mut env,
    );
    assert_eq!(
        out,
        json!({"first": "a", "tags": ["a", "b"], "pages": ["2"], "none": true})
    );
}

#[test]
fn req_body_and_json_are_nil_without_a_body() {
    let mut env = FakeEnv::new(&[]);
    let out = run_json(
        "return { no_body = req.body == nil, no_json = req.json == nil }",
        &Req::get("/x"),
        &mut env,
    );
    assert_eq!(out, json!({"no_body": true, "no_json": true}));
}

#[test]
fn emit_status_header_and_json_set_the_response() {
    let mut env = FakeEnv::new(&[]);
    let r = run(
        r#"emit.status(201)
           emit.header("X-Custom", "one")
           emit.header("x-custom", "two")
           emit.header("Retry-After", 5)
           emit.json({ ok = true, items = { 1, 2 } })"#,
        &Req::get("/x"),
        &mut env,
    );
    assert_eq!(r.status, 201);
    assert_eq!(
        r.headers,
        vec![
            ("x-custom".to_string(), "two".to_string()),
            ("Retry-After".to_string(), "5".to_string())
        ]
    );
    assert_eq!(
        r.body,
        HandlerBody::Json(json!({"items": [1, 2], "ok": true}))
    );
}

#[test]
fn emit_header_with_a_sequence_sends_the_header_once_per_value_in_order() {
    let mut env = FakeEnv::new(&[]);
    let r = run(
        r#"emit.header("Set-Cookie", "stale=1")
           emit.header("Set-Cookie", { "a=1; Path=/", "b=2", 3 })
           emit.header("Vary", {})
           emit.json({})"#,
        &Req::get("/x"),
        &mut env,
    );
    assert_eq!(
        r.headers,
        vec![
            ("Set-Cookie".to_string(), "a=1; Path=/".to_string()),
            ("Set-Cookie".to_string(), "b=2".to_string()),
            ("Set-Cookie".to_string(), "3".to_string()),
        ]
    );
}

#[test]
fn emit_header_refuses_a_sequence_holding_a_line_break_or_a_table() {
    for value in [r#"{ "ok", "bad\r\nX-Injected: 1" }"#, r#"{ { "nested" } }"#] {
        let mut env = FakeEnv::new(&[]);
        let err = run_err(
            &format!(r#"emit.header("Set-Cookie", {value})"#),
            &Req::get("/x"),
            &mut env,
        );
        assert!(err.contains("emit.header"), "{err}");
    }
}

#[test]
fn emit_header_refuses_what_the_server_could_not_send_instead_of_dropping_it() {
    for (call, said) in [
        (
            r#"emit.header("X(bad)", "v")"#,
            "is not a valid header name",
        ),
        (
            "emit.header(\"X-\u{C9}\", \"v\")",
            "is not a valid header name",
        ),
        (r#"emit.header("X Y", "v")"#, "is not a valid header name"),
        (
            r#"emit.header("X-Bad", "a\1b")"#,
            "is not a valid header value",
        ),
        (
            r#"emit.header("X-Bad", "a\127b")"#,
            "is not a valid header value",
        ),
        (r#"emit.header("X-N", 0/0)"#, "is not a value to send"),
        (
            r#"emit.header("X-N", { 1, math.huge })"#,
            "is not a value to send",
        ),
    ] {
        let mut env = FakeEnv::new(&[]);
        let err = run_err(call, &Req::get("/x"), &mut env);
        assert!(
            err.contains("emit.header") && err.contains(said),
            "{call}: {err}"
        );
    }
    // What HTTP allows is sent: a token name, a value with spaces, tabs and non-ASCII text.
    let mut env = FakeEnv::new(&[]);
    let r = run(
        "emit.header(\"X-Ok_1~\", \"caf\u{E9} \\t 2.5\") emit.header(\"X-N\", 2.5) emit.json({})",
        &Req::get("/x"),
        &mut env,
    );
    assert_eq!(
        r.headers,
        vec![
            ("X-Ok_1~".to_string(), "caf\u{E9} \t 2.5".to_string()),
            ("X-N".to_string(), "2.5".to_string()),
        ]
    );
}

#[test]
fn emit_body_string_is_raw_bytes_and_a_table_is_json() {
    let mut env = FakeEnv::new(&[]);
    let r = run(r#"emit.body("plain text")"#, &Req::get("/x"), &mut env);
    assert_eq!(r.status, 200);
    assert_eq!(
        r.body,
        HandlerBody::Bytes(bytes::Bytes::from_static(b"plain text"))
    );
    assert!(
        r.headers
            .iter()
            .any(|(k, v)| k == "content-type" && v.starts_with("text/plain"))
    );
    let r = run(r#"emit.body({ a = "b" })"#, &Req::get("/x"), &mut env);
    assert_eq!(r.body, HandlerBody::Json(json!({"a": "b"})));
    let r = run("emit.status(204)", &Req::get("/x"), &mut env);
    assert_eq!((r.status, r.body), (204, HandlerBody::Empty));
}

#[test]
fn emit_error_sets_status_and_a_code_message_envelope() {
    let mut env = FakeEnv::new(&[]);
    let r = run(
        r#"emit.error(422, "invalid_amount", "amount must be positive")"#,
        &Req::get("/x"),
        &mut env,
    );
    assert_eq!(r.status, 422);
    assert_eq!(
        r.body,
        HandlerBody::Json(
            json!({"error": {"code": "invalid_amount", "message": "amount must be positive"}})
        )
    );
    let msg = run_err(r#"emit.error(422, "code")"#, &Req::get("/x"), &mut env);
    assert!(
        msg.contains("emit.error: missing argument `message`"),
        "{msg}"
    );
}

#[test]
fn emit_status_rejects_what_is_not_an_http_status() {
    let mut env = FakeEnv::new(&[]);
    for bad in [
        "emit.status(42)",
        "emit.status(700)",
        // Interim responses: hyper cannot send one as the answer.
        "emit.status(100)",
        "emit.status(101)",
        "emit.status('ok')",
        "emit.status(200.5)",
    ] {
        let msg = run_err(bad, &Req::get("/x"), &mut env);
        assert!(
            msg.contains("emit.status: status must be an integer HTTP status"),
            "{bad}: {msg}"
        );
    }
}

#[test]
fn emit_json_refuses_values_that_are_not_json() {
    let mut env = FakeEnv::new(&[]);
    let msg = run_err(
        "emit.json({ f = function() end })",
        &Req::get("/x"),
        &mut env,
    );
    assert!(
        msg.contains("emit.json: the value cannot be encoded as JSON"),
        "{msg}"
    );
    let msg = run_err("emit.json({ 1, 2, x = 3 })", &Req::get("/x"), &mut env);
    assert!(msg.contains("cannot be encoded as JSON"), "{msg}");
}

#[test]
fn nan_and_infinities_are_refused_wherever_json_is_made_never_sent_as_null() {
    for src in [
        "return 0/0",
        "return { v = math.huge }",
        "return { list = { 1, -math.huge } }",
        "emit.json({ v = 0/0 })",
        "return { s = wraith.json_encode({ v = 0/0 }) }",
        "state.put('customers', 'cus_nan', { v = 0/0 })",
    ] {
        let mut env = FakeEnv::new(&[]);
        let msg = run_err(src, &Req::get("/x"), &mut env);
        assert!(msg.contains("cannot be encoded as JSON"), "{src}: {msg}");
        assert!(
            msg.contains("is not a number JSON can carry"),
            "{src}: {msg}"
        );
    }
}

#[test]
fn returning_a_value_or_a_function_answers_200() {
    let mut env = FakeEnv::new(&[]);
    let r = run("return { a = 1 }", &Req::get("/x"), &mut env);
    assert_eq!(
        (r.status, r.body),
        (200, HandlerBody::Json(json!({"a": 1})))
    );
    let out = run_json(
        "return function(r) return { path = r.path } end",
        &Req::get("/fn"),
        &mut env,
    );
    assert_eq!(out, json!({"path": "/fn"}));
    let r = run("return 'text'", &Req::get("/x"), &mut env);
    assert_eq!(
        r.body,
        HandlerBody::Bytes(bytes::Bytes::from_static(b"text"))
    );
}

#[test]
fn a_returned_table_is_the_body_under_an_emitted_status_and_headers() {
    let mut env = FakeEnv::new(&[]);
    let r = run(
        "emit.status(201) emit.header('Location', '/n/1') return { id = 'n1' }",
        &Req::get("/x"),
        &mut env,
    );
    assert_eq!(
        (r.status, r.body),
        (201, HandlerBody::Json(json!({"id": "n1"})))
    );
    assert!(
        r.headers
            .contains(&("Location".to_string(), "/n/1".to_string()))
    );
    // An emitted body wins over a returned one.
    let r = run(
        "emit.json({ from = 'emit' }) return { from = 'return' }",
        &Req::get("/x"),
        &mut env,
    );
    assert_eq!(r.body, HandlerBody::Json(json!({"from": "emit"})));
}

#[test]
fn a_handler_that_produces_no_response_fails() {
    let mut env = FakeEnv::new(&[]);
    let msg = run_err("local x = 1", &Req::get("/x"), &mut env);
    assert!(msg.contains("produced no response"), "{msg}");
}

#[test]
fn script_errors_name_the_file_and_line() {
    let mut env = FakeEnv::new(&[]);
    let msg = run_err("\n\nerror('boom')", &Req::get("/x"), &mut env);
    assert!(msg.contains("lua/handlers/test_handler.lua:3"), "{msg}");
    assert!(msg.contains("boom"), "{msg}");
}

/// An error raised with a value that is not a message would print as its type and address,
/// which differs from run to run: the failure says what was raised instead, the same every
/// time, and a table with `__tostring` still speaks for itself.
#[test]
fn an_error_raised_with_a_table_fails_with_the_same_message_every_run() {
    let mut env = FakeEnv::new(&[]);
    let first = run_err("error({ code = 1 })", &Req::get("/x"), &mut env);
    assert!(
        first.contains("a table was raised as the error, not a message"),
        "{first}"
    );
    assert!(!first.contains("0x"), "{first}");
    let again = run_err("error({ code = 1 })", &Req::get("/x"), &mut env);
    assert_eq!(first, again);
    let f = run_err("error(function() end)", &Req::get("/x"), &mut env);
    assert!(f.contains("a function was raised"), "{f}");
    let named = run_err(
        "error(setmetatable({}, { __tostring = function() return 'quota exhausted' end }))",
        &Req::get("/x"),
        &mut env,
    );
    assert!(named.contains("quota exhausted"), "{named}");
}

#[test]
fn state_get_and_put_deep_merge_upsert_and_return_the_stored_record() {
    let mut env = FakeEnv::new(&["customers"]).with(
        "customers",
        "cus_1",
        json!({"id": "cus_1", "name": "Ada", "email": "a@x"}),
    );
    let out = run_json(
        r#"local before = state.get("customers", "cus_1")
           local stored = state.put("customers", "cus_1", { name = "Ada L.", email = wraith.null })
           local created = state.put("customers", "cus_2", { name = "Bob" })
           return { before = before.name, stored = stored, created = created,
                    missing = state.get("customers", "nope") == nil }"#,
        &Req::get("/x"),
        &mut env,
    );
    assert_eq!(
        out,
        json!({"before": "Ada", "stored": {"id": "cus_1", "name": "Ada L."},
               "created": {"id": "cus_2", "name": "Bob"}, "missing": true})
    );
    assert_eq!(env.get_name("cus_2"), Some("Bob".to_string()));
}

trait Names {
    fn get_name(&self, id: &str) -> Option<String>;
}

impl Names for FakeEnv {
    fn get_name(&self, id: &str) -> Option<String> {
        use wraith_engine::HandlerEnv;
        self.get("customers", id)
            .and_then(|v| v.get("name").and_then(Value::as_str).map(str::to_string))
    }
}

#[test]
fn state_put_accepts_numeric_ids_and_requires_a_record() {
    let mut env = FakeEnv::new(&["orders"]);
    let out = run_json(
        r#"state.put("orders", 7, { amount = 5 })
           return state.get("orders", "7")"#,
        &Req::get("/x"),
        &mut env,
    );
    assert_eq!(out, json!({"amount": 5, "id": "7"}));
    let msg = run_err(r#"state.put("orders", "1")"#, &Req::get("/x"), &mut env);
    assert!(msg.contains("missing argument `record`"), "{msg}");
    let msg = run_err(r#"state.get("orders")"#, &Req::get("/x"), &mut env);
    assert!(msg.contains("state.get: missing argument `id`"), "{msg}");
}

/// Read lossily, two different byte strings that are not UTF-8 would name one record (both
/// become `cus_\u{FFFD}`): every state function refuses such an id or name instead.
#[test]
fn state_refuses_ids_and_names_that_are_not_utf8_text() {
    let mut env = FakeEnv::new(&["customers"]);
    for (src, func, arg) in [
        (
            r#"state.put("customers", "cus_\255", { name = "a" })"#,
            "state.put",
            "id",
        ),
        (r#"state.get("customers", "cus_\254")"#, "state.get", "id"),
        (
            r#"state.delete("customers", "cus_\254")"#,
            "state.delete",
            "id",
        ),
        (
            r#"state.put("cus\255", "c1", { name = "a" })"#,
            "state.put",
            "type",
        ),
        (r#"state.get("cus\255", "c1")"#, "state.get", "type"),
        (r#"state.list("cus\255")"#, "state.list", "type"),
        (r#"state.count("cus\255")"#, "state.count", "type"),
        (r#"state.new_id("cus\255")"#, "state.new_id", "type"),
        (
            r#"state.query("cus\255", "name", "a")"#,
            "state.query",
            "type",
        ),
        (
            r#"state.query("customers", "n\255", "a")"#,
            "state.query",
            "field",
        ),
        (r#"state.counter("c\255")"#, "state.counter", "name"),
    ] {
        let msg = run_err(src, &Req::get("/x"), &mut env);
        assert!(
            msg.contains(&format!("{func}: argument `{arg}` is not UTF-8 text")),
            "{src}: {msg}"
        );
        assert!(
            msg.contains("\\xff") || msg.contains("\\xfe"),
            "{src}: {msg}"
        );
    }
    assert!(env.store.is_empty(), "nothing was stored");
    // A handler can catch it, and UTF-8 ids beyond ASCII still name their record.
    let out = run_json(
        r#"local ok, err = pcall(state.get, "customers", "cus_\255")
           state.put("customers", "cus_é", { name = "e" })
           return { ok = ok, named = string.find(err, "state.get", 1, true) ~= nil,
                    found = state.get("customers", "cus_é").name }"#,
        &Req::get("/x"),
        &mut env,
    );
    assert_eq!(out, json!({"ok": false, "named": true, "found": "e"}));
}

#[test]
fn state_delete_reports_whether_the_entity_existed() {
    let mut env = FakeEnv::new(&["customers"]).with("customers", "cus_1", json!({"id": "cus_1"}));
    let out = run_json(
        r#"return { first = state.delete("customers", "cus_1"),
                    second = state.delete("customers", "cus_1"),
                    gone = state.get("customers", "cus_1") == nil }"#,
        &Req::get("/x"),
        &mut env,
    );
    assert_eq!(out, json!({"first": true, "second": false, "gone": true}));
}

#[test]
fn state_list_count_and_query_read_the_store() {
    let mut env = FakeEnv::new(&["orders"])
        .with(
            "orders",
            "o1",
            json!({"id": "o1", "customer_id": "c1", "amount": 7, "meta": {"tag": "x"}}),
        )
        .with(
            "orders",
            "o2",
            json!({"id": "o2", "customer_id": "c2", "amount": "7", "note": null}),
        )
        .with(
            "orders",
            "o3",
            json!({"id": "o3", "customer_id": "c1", "amount": 9}),
        );
    let out = run_json(
        r#"local function ids(list) local out = setmetatable({}, wraith.array_mt)
             for i, o in ipairs(list) do out[i] = o.id end return out end
           return {
             all = ids(state.list("orders")), count = state.count("orders"),
             none = state.list("nothing"), zero = state.count("nothing"),
             c1 = ids(state.query("orders", "customer_id", "c1")),
             seven = ids(state.query("orders", "amount", 7)),
             tagged = ids(state.query("orders", "meta.tag", "x")),
             null_note = ids(state.query("orders", "note", nil)),
           }"#,
        &Req::get("/x"),
        &mut env,
    );
    assert_eq!(
        out,
        json!({"all": ["o1", "o2", "o3"], "count": 3, "none": [], "zero": 0,
               "c1": ["o1", "o3"], "seven": ["o1", "o2"], "tagged": ["o1"], "null_note": ["o2"]})
    );
    let msg = run_err(
        r#"state.query("orders", "amount")"#,
        &Req::get("/x"),
        &mut env,
    );
    assert!(
        msg.contains("state.query(type, field, value): missing argument"),
        "{msg}"
    );
}

#[test]
fn state_counter_increments_per_name() {
    let mut env = FakeEnv::new(&[]);
    let out = run_json(
        r#"return { state.counter("a"), state.counter("a"), state.counter("b") }"#,
        &Req::get("/x"),
        &mut env,
    );
    assert_eq!(out, json!([1, 2, 1]));
    let out = run_json(
        r#"return { state.counter("a") }"#,
        &Req::get("/x"),
        &mut env,
    );
    assert_eq!(
        out,
        json!([3]),
        "counters live in the environment, across invocations"
    );
}

#[test]
fn writing_an_undeclared_entity_type_fails_the_handler() {
    let mut env = FakeEnv::new(&["customers"]);
    let msg = run_err(
        r#"state.put("widgets", "w1", { a = 1 }) return {}"#,
        &Req::get("/x"),
        &mut env,
    );
    assert!(
        msg.contains("entity type `widgets` is not declared"),
        "{msg}"
    );
    let msg = run_err(
        r#"state.delete("widgets", "w1") return {}"#,
        &Req::get("/x"),
        &mut env,
    );
    assert!(msg.contains("not declared"), "{msg}");
}

#[test]
fn clock_now_and_advance_read_and_move_the_session_clock() {
    let mut env = FakeEnv::new(&[]);
    let out = run_json(
        r#"local a = clock.now()
           clock.advance(60)
           local b = clock.now()
           clock.advance()
           local c = clock.now()
           return { a = a, b = b, c = c }"#,
        &Req::get("/x"),
        &mut env,
    );
    // The fake clock advances one second per reading, like the deterministic engine clock.
    assert_eq!(
        out,
        json!({"a": 1_700_000_000, "b": 1_700_000_061, "c": 1_700_000_063})
    );
    let msg = run_err("clock.advance(-1)", &Req::get("/x"), &mut env);
    assert!(
        msg.contains("clock.advance: seconds must be a finite number"),
        "{msg}"
    );
}

#[test]
fn os_time_and_os_clock_read_the_session_clock_and_nothing_else_of_os_exists() {
    let mut env = FakeEnv::new(&[]);
    let out = run_json(
        r#"return { t = os.time(), c = os.clock(), date = type(os.date),
                    exit = os.exit == nil, getenv = os.getenv == nil }"#,
        &Req::get("/x"),
        &mut env,
    );
    assert_eq!(
        out,
        json!({"t": 1_700_000_000, "c": 1_700_000_001, "date": "function", "exit": true, "getenv": true})
    );
}

#[test]
fn os_date_formats_the_session_clock_or_a_given_time_in_utc() {
    let mut env = FakeEnv::new(&[]);
    let out = run_json(
        r#"return { now = os.date("!%Y-%m-%dT%H:%M:%SZ"), local_ = os.date("%H:%M", 1700000000),
                    epoch = os.date("%Y-%m-%d", 0), t = os.date("*t", 1700000000) }"#,
        &Req::get("/x"),
        &mut env,
    );
    assert_eq!(
        out,
        json!({
            "now": "2023-11-14T22:13:20Z",
            "local_": "22:13",
            "epoch": "1970-01-01",
            "t": {"year": 2023, "month": 11, "day": 14, "hour": 22, "min": 13, "sec": 20,
                  "wday": 3, "yday": 318, "isdst": false},
        })
    );
}

#[test]
fn os_date_spells_c_x_and_big_x_as_luas_c_locale_and_is_that_by_default() {
    let mut env = FakeEnv::new(&[]);
    let out = run_json(
        r#"return { default = os.date(nil, 1700000000), c = os.date("%c", 1700000000),
                    day = os.date("!%c", 1701561327), x = os.date("%x", 1700000000),
                    big_x = os.date("%X", 1700000000), literal = os.date("%%c %%x", 0) }"#,
        &Req::get("/x"),
        &mut env,
    );
    assert_eq!(
        out,
        json!({
            "default": "Tue Nov 14 22:13:20 2023",
            "c": "Tue Nov 14 22:13:20 2023",
            "day": "Sat Dec  2 23:55:27 2023",
            "x": "11/14/23",
            "big_x": "22:13:20",
            "literal": "%c %x",
        })
    );
}

#[test]
fn os_time_of_a_table_reads_it_as_utc_and_carries_over_like_mktime() {
    let mut env = FakeEnv::new(&[]);
    let out = run_json(
        r#"return { exact = os.time({ year = 2023, month = 11, day = 14, hour = 22, min = 13, sec = 20 }),
                    noon = os.time({ year = 2024, month = 1, day = 32 }),
                    back = os.time(os.date("*t", 1234567890)) }"#,
        &Req::get("/x"),
        &mut env,
    );
    assert_eq!(
        out,
        json!({"exact": 1_700_000_000, "noon": 1_706_788_800, "back": 1_234_567_890})
    );
}

#[test]
fn os_date_and_os_time_name_what_is_wrong() {
    for (src, says) in [
        ("os.time({ month = 1, day = 1 })", "no `year` field"),
        (
            r#"os.time({ year = "soon", month = 1, day = 1 })"#,
            "`year` must be a whole number",
        ),
        (
            "os.time({ year = 99999, month = 1, day = 1 })",
            "out of range",
        ),
        (r#"os.date("%Y", 1.5)"#, "whole unix seconds"),
        (r#"os.date("%Y-%")"#, "not a date format"),
    ] {
        let mut env = FakeEnv::new(&[]);
        let err = run_err(src, &Req::get("/x"), &mut env);
        assert!(err.contains(says), "{src}: {err}");
    }
}

#[test]
fn math_random_draws_from_the_session_rng() {
    let src = r#"math.randomseed(123)
                 local f = math.random()
                 return { f_ok = f >= 0 and f < 1, d = math.random(6), r = math.random(10, 12) }"#;
    let mut a = FakeEnv::new(&[]);
    let mut b = FakeEnv::new(&[]);
    let first = run_json(src, &Req::get("/x"), &mut a);
    assert_eq!(
        first,
        run_json(src, &Req::get("/x"), &mut b),
        "same seed, same draws"
    );
    assert_eq!(first["f_ok"], json!(true));
    let d = first["d"].as_i64().unwrap();
    let r = first["r"].as_i64().unwrap();
    assert!((1..=6).contains(&d) && (10..=12).contains(&r), "{first}");
    let mut c = FakeEnv::new(&[]);
    c.rng = 7;
    let draws = |env: &mut FakeEnv| {
        run_json(
            "local t = {} for i = 1, 8 do t[i] = math.random(1000000) end return t",
            &Req::get("/x"),
            env,
        )
    };
    assert_ne!(draws(&mut a), draws(&mut c), "another seed, other draws");
    let msg = run_err("math.random(5, 1)", &Req::get("/x"), &mut a);
    assert!(msg.contains("interval is empty"), "{msg}");
}

#[test]
fn wraith_import_runs_lib_modules_in_their_own_scope_once_per_invocation() {
    let libs = [
        (
            "money",
            r#"loads = (loads or 0) + 1
               local M = {}
               function M.cents(n) return string.format("%d.%02d", n // 100, n % 100) end
               function M.loads() return loads end
               return M"#,
        ),
        ("shapes/box", "area = function(w, h) return w * h end"),
    ];
    let h = handler_with(
        r#"local m = wraith.import("money")
           local again = wraith.import("money")
           local box = wraith.import("shapes.box")
           return { price = m.cents(1234), same = m == again, loads = m.loads(),
                    leaked = loads == nil and area == nil, area = box.area(2, 3) }"#,
        &libs,
        wraith_script::ScriptOptions::default(),
    );
    let mut env = FakeEnv::new(&[]);
    let r = call(&h, &Req::get("/x"), &mut env).unwrap();
    assert_eq!(
        r.body,
        HandlerBody::Json(
            json!({"price": "12.34", "same": true, "loads": 1, "leaked": true, "area": 6})
        )
    );
    let h = handler_with(
        r#"wraith.import("nope")"#,
        &libs,
        wraith_script::ScriptOptions::default(),
    );
    let msg = call(&h, &Req::get("/x"), &mut env).unwrap_err().message;
    assert!(
        msg.contains("wraith.import: no module `nope` in lua/lib/ (available: money, shapes/box)"),
        "{msg}"
    );
}

#[test]
fn wraith_import_refuses_a_cycle() {
    let libs = [
        ("a", "return wraith.import('b')"),
        ("b", "return wraith.import('a')"),
    ];
    let h = handler_with(
        "wraith.import('a')",
        &libs,
        wraith_script::ScriptOptions::default(),
    );
    let msg = call(&h, &Req::get("/x"), &mut FakeEnv::new(&[]))
        .unwrap_err()
        .message;
    assert!(msg.contains("imports itself"), "{msg}");
}

#[test]
fn wraith_json_decode_returns_a_value_or_nil_and_a_message() {
    let mut env = FakeEnv::new(&[]);
    let out = run_json(
        r#"local v = wraith.json_decode('{"a":[1,2],"n":null}')
           local bad, msg = wraith.json_decode('{nope')
           local deep, deep_msg = wraith.json_decode(string.rep('[', 100) .. string.rep(']', 100))
           local nonstring, ns_msg = wraith.json_decode(42)
           return { a2 = v.a[2], null = v.n == wraith.null, bad = bad == nil,
                    has_msg = type(msg) == "string", deep = deep == nil,
                    deep_msg = deep_msg, ns = ns_msg }"#,
        &Req::get("/x"),
        &mut env,
    );
    assert_eq!(out["a2"], json!(2));
    assert_eq!(out["null"], json!(true));
    assert_eq!(out["bad"], json!(true));
    assert_eq!(out["has_msg"], json!(true));
    assert_eq!(out["deep"], json!(true));
    assert!(
        out["deep_msg"].as_str().unwrap().contains("nested deeper"),
        "{out}"
    );
    assert_eq!(out["ns"], json!("expected a string, got integer"));
}

#[test]
fn wraith_json_encode_sorts_keys_and_refuses_functions() {
    let mut env = FakeEnv::new(&[]);
    let out = run_json(
        r#"return { s = wraith.json_encode({ b = 1, a = { true, "x" }, n = wraith.null }) }"#,
        &Req::get("/x"),
        &mut env,
    );
    assert_eq!(out, json!({"s": "{\"a\":[true,\"x\"],\"b\":1,\"n\":null}"}));
    let msg = run_err("wraith.json_encode({ print })", &Req::get("/x"), &mut env);
    assert!(
        msg.contains("wraith.json_encode: the value cannot be encoded as JSON"),
        "{msg}"
    );
}

#[test]
fn wraith_array_mt_makes_an_empty_table_encode_as_an_array() {
    let mut env = FakeEnv::new(&[]);
    let out = run_json(
        "return { plain = {}, array = setmetatable({}, wraith.array_mt) }",
        &Req::get("/x"),
        &mut env,
    );
    assert_eq!(out, json!({"array": [], "plain": {}}));
}

#[test]
fn decoded_json_null_is_the_null_sentinel_and_round_trips() {
    let mut env = FakeEnv::new(&[]);
    let req = Req::post("/x", json!({"a": null, "list": []}));
    let out = run_json(
        "return { is_null = req.json.a == wraith.null, echo = req.json }",
        &req,
        &mut env,
    );
    assert_eq!(
        out,
        json!({"is_null": true, "echo": {"a": null, "list": []}})
    );
}

#[test]
fn api_errors_are_plain_strings_a_handler_can_catch() {
    let mut env = FakeEnv::new(&["customers"]);
    let out = run_json(
        r#"local ok, err = pcall(state.put, "widgets", "w1", { a = 1 })
           local ok2, err2 = pcall(function() emit.status(42) end)
           return { ok = ok, kind = type(err), undeclared = err:find("not declared") ~= nil,
                    ok2 = ok2, where = err2:match("^(lua/handlers/test_handler.lua:%d+)") }"#,
        &Req::get("/x"),
        &mut env,
    );
    assert_eq!(
        out,
        json!({"ok": false, "kind": "string", "undeclared": true, "ok2": false,
               "where": "lua/handlers/test_handler.lua:2"})
    );
}
