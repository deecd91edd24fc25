//! The sandbox: what a handler cannot reach, and the per-invocation budgets (CPU time,
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
fn an_endless_loop_is_stopped_once_it_has_run_its_cpu_time_budget() {
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
        err.message.contains("exceeded the 100 ms CPU-time budget"),
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

/// A handler that runs about a third of its budget passes however many others run beside it:
/// time spent waiting for a core is not its own. Eight handlers per core at once make each
/// wait for the others well past its budget on the wall clock.
#[test]
fn time_spent_waiting_for_a_core_does_not_count_against_the_budget() {
    let opts = ScriptOptions {
        deadline: Duration::from_millis(100),
        max_interrupts: u64::MAX,
        ..ScriptOptions::default()
    };
    let h = handler_with(
        "local n = 0
         for i = 1, LOOPS do n = (n + i * 7) % 1000003 end
         return { n = n }"
            .replace("LOOPS", &THIRD_OF_BUDGET_LOOPS.to_string())
            .as_str(),
        &[],
        opts,
    );
    let cores = std::thread::available_parallelism().map_or(2, usize::from);
    let answers: Vec<_> = std::thread::scope(|s| {
        let running: Vec<_> = (0..8 * cores)
            .map(|_| s.spawn(|| call(&h, &Req::get("/x"), &mut FakeEnv::new(&[]))))
            .collect();
        running.into_iter().map(|t| t.join().unwrap()).collect()
    });
    for a in answers {
        assert!(a.is_ok(), "{}", a.unwrap_err());
    }
}

/// Loop iterations of the handler above that take about a third of 100 ms of CPU time in a
/// test build.
const THIRD_OF_BUDGET_LOOPS: u64 = 300_000;

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
    assert!(err.message.contains("CPU-time budget"), "{err}");
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

/// The allowance a JSON body brings (eight times its length) comes with the first read of
/// `req.json`: a handler that never reads it gets the plain budget, however large the body.
#[test]
fn a_json_body_lends_memory_only_to_a_handler_that_reads_req_json() {
    let body = json!({"text": "z".repeat(512 * 1024)});
    let mut req = Req::post("/x", body.clone());
    req.body = body.to_string().into_bytes();
    let alloc = r#"local s = string.rep("x", 3 * 1024 * 1024) return { len = #s }"#;
    let ignores = handler_with(alloc, &[], ScriptOptions::default());
    let err = call(&ignores, &req, &mut FakeEnv::new(&[])).unwrap_err();
    assert!(err.message.contains("exceeded the memory budget"), "{err}");
    let reads = handler_with(
        &format!("local n = #req.json.text {alloc}"),
        &[],
        ScriptOptions::default(),
    );
    let r = call(&reads, &req, &mut FakeEnv::new(&[])).unwrap();
    assert_eq!(
        r.body,
        wraith_engine::HandlerBody::Json(json!({"len": 3 * 1024 * 1024}))
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

/// Budgets that let the conversions below run to their limit in a debug build.
fn slow_ok(max_memory_bytes: usize) -> ScriptOptions {
    ScriptOptions {
        max_memory_bytes,
        deadline: Duration::from_secs(30),
        max_interrupts: u64::MAX,
    }
}

/// One 400 KB string named many times stays far under Lua's budget, but each conversion to
/// Rust writes it once per reference: every path is held to the output limit (16 × the
/// budget), whether the handler returns the value, emits it or stores it.
#[test]
fn a_string_named_many_times_fails_every_conversion_past_the_output_limit() {
    let prelude = r#"local s = string.rep("x", 400000)
                     local t = table.create(1000, s)
                     "#;
    for (call_src, what) in [
        ("return t", "the handler's return value"),
        ("emit.json(t)", "emit.json"),
        ("emit.body(t)", "emit.body"),
        (
            "emit.header(\"x-big\", t) return {}",
            "emit.header: `x-big`",
        ),
        (
            "state.put(\"customers\", \"c1\", { name = t })",
            "state.put",
        ),
        (
            "return { n = #wraith.json_encode(t) }",
            "wraith.json_encode",
        ),
        ("state.query(\"customers\", \"name\", t)", "state.query"),
    ] {
        let mut env = FakeEnv::new(&["customers"]);
        let h = handler_with(&format!("{prelude}{call_src}"), &[], slow_ok(1024 * 1024));
        let started = Instant::now();
        let msg = call(&h, &Req::get("/x"), &mut env).unwrap_err().message;
        assert!(
            msg.contains(&format!("{what}: the value takes more than 16384 KiB")),
            "{call_src}: {msg}"
        );
        assert!(msg.contains("counts each time"), "{call_src}: {msg}");
        assert!(started.elapsed() < Duration::from_secs(10), "{call_src}");
        assert!(env.store.is_empty(), "{call_src}: nothing is stored");
    }
    // Many headers each naming the string once are counted together.
    let h = handler_with(
        &format!("{prelude}for i = 1, 100 do emit.header(\"x-\" .. i, s) end return {{}}"),
        &[],
        slow_ok(1024 * 1024),
    );
    let msg = call(&h, &Req::get("/x"), &mut FakeEnv::new(&[]))
        .unwrap_err()
        .message;
    assert!(msg.contains("emit.header: `x-"), "{msg}");
}

#[test]
fn the_output_limit_follows_the_memory_budget_and_spares_values_under_it() {
    // 40 copies of 400 KB (16 MB) pass under the default 1024 KiB budget's 16 MiB...
    let src = r#"local s = string.rep("x", 400000) return table.create(40, s)"#;
    let h = handler_with(src, &[], slow_ok(1024 * 1024));
    let r = call(&h, &Req::get("/x"), &mut FakeEnv::new(&[])).unwrap();
    let wraith_engine::HandlerBody::Json(serde_json::Value::Array(items)) = r.body else {
        panic!("expected a JSON array, got {:?}", r.body);
    };
    assert_eq!(items.len(), 40);
    // ...and fail under a 512 KiB budget's 8 MiB.
    let h = handler_with(src, &[], slow_ok(512 * 1024));
    let err = call(&h, &Req::get("/x"), &mut FakeEnv::new(&[])).unwrap_err();
    assert!(
        err.message
            .contains("the handler's return value: the value takes more than 8192 KiB"),
        "{err}"
    );
}

#[test]
fn a_handler_may_answer_with_the_json_body_it_was_sent_whatever_the_budget() {
    // A JSON body larger than the budget's output limit (16 × 64 KiB) is the request's, not
    // the handler's: echoing it (and storing it) still converts.
    let items: Vec<serde_json::Value> = (0..300)
        .map(|i| json!({"name": format!("item {i}"), "text": "y".repeat(4000)}))
        .collect();
    let body = json!({"items": items});
    let req = Req::post("/x", body.clone());
    assert!(req.body.len() > 16 * 64 * 1024);
    let h = handler_with(
        r#"state.put("customers", "c1", req.json) return req.json"#,
        &[],
        slow_ok(64 * 1024),
    );
    let r = call(&h, &req, &mut FakeEnv::new(&["customers"])).unwrap();
    assert_eq!(r.body, wraith_engine::HandlerBody::Json(body));
}

/// Luau names a table, function, coroutine or buffer by its memory address, which differs
/// from run to run: a handler's answer must not depend on it.
#[test]
fn tostring_names_values_without_their_address_in_the_order_first_named() {
    let src = r#"local t, u = {}, {}
                 local co = coroutine.create(function() end)
                 local named = setmetatable({}, { __tostring = function() return "mine" end })
                 return { t = tostring(t), u = tostring(u), again = tostring(t),
                          f = tostring(print), co = tostring(co),
                          b = tostring(buffer.create(4)),
                          null = tostring(wraith.null),
                          named = tostring(named), n = tostring(1.5), s = tostring("s"),
                          nothing = tostring(nil), yes = tostring(true),
                          via_local = (function() local ts = tostring return ts(u) end)(),
                          missing = select(2, pcall(tostring)) }"#;
    let first = run_json(src, &Req::get("/x"), &mut FakeEnv::new(&[]));
    let second = run_json(src, &Req::get("/x"), &mut FakeEnv::new(&[]));
    assert_eq!(first, second);
    assert_eq!(first["t"], "table: #1");
    assert_eq!(first["u"], "table: #2");
    assert_eq!(first["again"], "table: #1");
    assert_eq!(first["f"], "function: #3");
    assert_eq!(first["co"], "thread: #4");
    assert_eq!(first["b"], "buffer: #5");
    assert_eq!(first["named"], "mine");
    assert_eq!(first["n"], "1.5");
    assert_eq!(first["s"], "s");
    assert_eq!(first["nothing"], "nil");
    assert_eq!(first["yes"], "true");
    assert_eq!(first["via_local"], "table: #2");
    assert!(
        first["missing"]
            .as_str()
            .unwrap()
            .contains("missing argument"),
        "{first}"
    );
    // `wraith.null` is the null pointer, the same in every run.
    assert_eq!(first["null"], "userdata: 0x0000000000000000");
    let mut rest = first.clone();
    rest.as_object_mut().unwrap().remove("null");
    assert!(!rest.to_string().contains("0x"), "{rest}");
}

#[test]
fn string_format_and_interpolation_name_values_without_their_address() {
    let src = r#"local t = {}
                 return { star = string.format("%* and %*", t, print),
                          method = ("%*"):format(t),
                          interpolated = `{t} {1 + 1} {"x"}`,
                          plain = string.format("%s=%d", "a", 3),
                          table_as_s = select(2, pcall(string.format, "%s", t)) }"#;
    let out = run_json(src, &Req::get("/x"), &mut FakeEnv::new(&[]));
    assert_eq!(out["star"], "table: #1 and function: #2");
    assert_eq!(out["method"], "table: #1");
    assert_eq!(out["interpolated"], "table: #1 2 x");
    assert_eq!(out["plain"], "a=3");
    assert!(!out.to_string().contains("0x"), "{out}");
}

#[test]
fn a_table_key_json_cannot_carry_is_named_without_its_address() {
    let msg = run_err(
        "emit.json({ 1, [{}] = 2 })",
        &Req::get("/x"),
        &mut FakeEnv::new(&[]),
    );
    assert!(msg.contains("cannot be encoded as JSON"), "{msg}");
    assert!(!msg.contains("0x"), "{msg}");
}
