//! The sandbox: what a handler cannot reach, and the per-invocation budgets (wall clock,
//! memory, instructions).
#![allow(clippy::unwrap_used)]

mod support;

use std::time::{Duration, Instant};

use serde_json::json;
use support::*;
use wraith_script::ScriptOptions;

#[test]
fn io_os_debug_load_loadstring_require_and_raw_access_are_absent() {
    let mut env = FakeEnv::new(&[]);
    let out = run_json(
        r#"return {
             io = io == nil, debug = debug == nil, load = load == nil,
             loadstring = loadstring == nil, require = require == nil,
             dofile = dofile == nil, getfenv = getfenv == nil, setfenv = setfenv == nil,
             rawset = rawset == nil, rawget = rawget == nil, newproxy = newproxy == nil,
             package = package == nil, os_execute = os.execute == nil,
             os_getenv = os.getenv == nil, os_remove = os.remove == nil,
           }"#,
        &Req::get("/x"),
        &mut env,
    );
    for (k, v) in out.as_object().unwrap() {
        assert_eq!(v, &json!(true), "`{k}` must not be reachable");
    }
}

#[test]
fn libraries_are_read_only() {
    let mut env = FakeEnv::new(&[]);
    for src in [
        "math.random = function() return 4 end",
        "string.rep = nil",
        "state.put = nil",
        "wraith.import = nil",
    ] {
        let msg = run_err(src, &Req::get("/x"), &mut env);
        assert!(msg.contains("readonly"), "{src}: {msg}");
    }
}

#[test]
fn globals_written_by_one_invocation_do_not_leak_into_the_next() {
    let h = handler(
        "local seen = leaked ~= nil
         leaked = true
         return { seen = seen }",
    );
    let mut env = FakeEnv::new(&[]);
    for _ in 0..2 {
        let r = call(&h, &Req::get("/x"), &mut env).unwrap();
        assert_eq!(
            r.body,
            wraith_engine::HandlerBody::Json(json!({"seen": false}))
        );
    }
}

#[test]
fn an_endless_loop_is_stopped_at_the_wall_clock_deadline() {
    let opts = ScriptOptions {
        deadline: Duration::from_millis(100),
        max_interrupts: u64::MAX,
        ..ScriptOptions::default()
    };
    let h = handler_with("while true do end", &[], opts);
    let started = Instant::now();
    let err = call(&h, &Req::get("/x"), &mut FakeEnv::new(&[])).unwrap_err();
    let took = started.elapsed();
    assert!(
        err.message
            .contains("exceeded the 100 ms wall-clock budget"),
        "{err}"
    );
    assert!(
        took >= Duration::from_millis(100),
        "stopped before the deadline: {took:?}"
    );
    assert!(
        took < Duration::from_secs(5),
        "not stopped near the deadline: {took:?}"
    );
}

#[test]
fn an_endless_loop_caught_by_pcall_is_still_stopped() {
    let opts = ScriptOptions {
        max_interrupts: u64::MAX,
        ..ScriptOptions::default()
    };
    let h = handler_with(
        "while true do pcall(function() while true do end end) end",
        &[],
        opts,
    );
    let err = call(&h, &Req::get("/x"), &mut FakeEnv::new(&[])).unwrap_err();
    assert!(err.message.contains("wall-clock budget"), "{err}");
}

#[test]
fn the_instruction_budget_stops_long_loops_and_spares_short_ones() {
    let opts = ScriptOptions {
        deadline: Duration::from_secs(30),
        max_interrupts: 10_000,
        ..ScriptOptions::default()
    };
    let h = handler_with(
        "local n = 0 for i = 1, 1000000 do n = n + i end return { n = n }",
        &[],
        opts,
    );
    let err = call(&h, &Req::get("/x"), &mut FakeEnv::new(&[])).unwrap_err();
    assert!(
        err.message
            .contains("exceeded the instruction budget (10000 interrupts"),
        "{err}"
    );
    let h = handler_with(
        "local n = 0 for i = 1, 1000 do n = n + i end return { n = n }",
        &[],
        opts,
    );
    let r = call(&h, &Req::get("/x"), &mut FakeEnv::new(&[])).unwrap();
    assert_eq!(
        r.body,
        wraith_engine::HandlerBody::Json(json!({"n": 500500}))
    );
}

#[test]
fn a_memory_bomb_is_stopped_at_the_memory_limit() {
    let opts = ScriptOptions {
        max_memory_bytes: 256 * 1024,
        max_interrupts: u64::MAX,
        deadline: Duration::from_secs(30),
    };
    let h = handler_with(
        r#"local t = {}
           for i = 1, 10000000 do t[i] = string.rep("x", 64) .. i end
           return { n = #t }"#,
        &[],
        opts,
    );
    let err = call(&h, &Req::get("/x"), &mut FakeEnv::new(&[])).unwrap_err();
    assert!(
        err.message
            .contains("exceeded the memory budget of 256 KiB"),
        "{err}"
    );
}

#[test]
fn the_memory_budget_is_on_top_of_the_request() {
    // A request body larger than the budget is not the handler's allocation.
    let opts = ScriptOptions::default();
    let big = "y".repeat(3 * 1024 * 1024);
    let h = handler_with("return { len = #req.body }", &[], opts);
    let mut req = Req::get("/x");
    req.body = big.into_bytes();
    let r = call(&h, &req, &mut FakeEnv::new(&[])).unwrap();
    assert_eq!(
        r.body,
        wraith_engine::HandlerBody::Json(json!({"len": 3145728}))
    );
}

/// A JSON body of two hundred thousand tiny objects: about 1.6 MB of text that Lua holds in
/// tens of megabytes of tables.
fn many_tiny_objects() -> Req {
    let items: Vec<serde_json::Value> = (0..200_000).map(|_| json!({"a": 1})).collect();
    let body = json!(items);
    let mut req = Req::post("/x", body.clone());
    req.body = body.to_string().into_bytes();
    req
}

#[test]
fn req_json_is_converted_under_the_memory_budget_when_the_handler_reads_it() {
    let req = many_tiny_objects();
    let reads = handler_with("return { n = #req.json }", &[], ScriptOptions::default());
    let err = call(&reads, &req, &mut FakeEnv::new(&[])).unwrap_err();
    assert!(err.message.contains("exceeded the memory budget"), "{err}");
    // A handler that never reads it pays nothing for it.
    let ignores = handler_with("return { len = #req.body }", &[], ScriptOptions::default());
    let r = call(&ignores, &req, &mut FakeEnv::new(&[])).unwrap();
    assert_eq!(
        r.body,
        wraith_engine::HandlerBody::Json(json!({"len": req.body.len()}))
    );
}

#[test]
fn req_json_is_one_table_however_often_it_is_read() {
    let h = handler_with(
        "local a = req.json; a.seen = true; return { same = req.json == a, seen = req.json.seen, n = req.json.n }",
        &[],
        ScriptOptions::default(),
    );
    let r = call(
        &h,
        &Req::post("/x", json!({"n": 3})),
        &mut FakeEnv::new(&[]),
    )
    .unwrap();
    assert_eq!(
        r.body,
        wraith_engine::HandlerBody::Json(json!({"same": true, "seen": true, "n": 3}))
    );
}
