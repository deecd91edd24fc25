//! The handler runtime: one sandboxed Luau VM per invocation.
//!
//! # What a handler sees
//!
//! A handler file is a chunk run once per request. It uses `emit`, returns a value (a table
//! becomes the JSON body, a string the raw body; status 200 unless `emit.status` set one), or
//! both (a body `emit` set wins over a returned one); a chunk that returns a function has that
//! function called with `req`, and its return value is used the same way.
//!
//! - `req`: `method`, `path`, `headers` (lowercase names; repeated headers joined with `, `),
//!   `query` (first value of each name), `params` (path parameters by the route's names),
//!   `body` (raw string, or `nil` when empty), `json` (the decoded body, or `nil`).
//! - `emit`: `status(n)`, `header(name, value)` (replaces a header of the same name; a
//!   sequence of values sends the header once per value, in order),
//!   `json(value)`, `body(string | table)` (a table is an alias of `json`),
//!   `error(status, code, message)` → `{"error":{"code":…,"message":…}}`.
//! - `state` (the session's entity store, shared with the CRUD engine): `get(type, id)`,
//!   `put(type, id, record)` (deep-merge upsert, returns the stored record),
//!   `delete(type, id)` (whether it existed), `list(type)`, `query(type, field, value)`,
//!   `count(type)`, `counter(name)`, `new_id(type)` (a fresh id: the type's learned shape, or
//!   its declared `id_format`). Writing a type that is neither route-derived nor declared in
//!   `state/schema.json` fails the handler; so does a type, id, field or counter name that is
//!   not UTF-8 text (read lossily, two such ids would name one record).
//! - `clock`: `now()` (a reading of the session clock, unix seconds), `advance(secs)` (default
//!   1 s; moves the session clock for every later reading, templates included).
//! - `wraith`: `import(name)` (a module of `lua/lib/`, run once per invocation in its own
//!   global scope, its return value cached), `json_decode(s)` (value, or `nil` and a message),
//!   `json_encode(v)`, `array_mt` (set it on an empty table to encode `[]`), `null` (the JSON
//!   `null` sentinel; decoded nulls are this value).
//! - `math.random` draws from the session's seeded RNG (`math.randomseed` is a no-op);
//!   `os.time()`, `os.clock()` and `os.date()` read the session clock; `os.date` and
//!   `os.time(table)` work in UTC (`os_time`). Nothing else of `os` exists.
//! - `tostring` and `string.format`'s `%*` (so string interpolation) name a table, function,
//!   coroutine or buffer without `__tostring` `table: #1`, `function: #2`…, numbered per
//!   invocation, never by its address (`install_deterministic_names`).
//!
//! The API functions fail loudly (missing arguments, undeclared types, values JSON cannot
//! carry) by raising plain strings prefixed with the handler's file and line, which `pcall`
//! returns as strings.
//!
//! # Sandbox and budgets
//!
//! Luau with `sandbox(true)` (read-only globals and libraries), without `io`, `debug`,
//! `require`, `loadstring`, `getfenv`/`setfenv`, `newproxy` or the `raw*` functions; `print`
//! prints nothing. Each invocation has a CPU-time budget ([`ScriptOptions::deadline`], 100 ms
//! of the CPU time of the thread running it, so time spent waiting for a core while other
//! sessions' handlers run does not count: see `cpu_budget`), a memory limit on top of what the
//! VM and the request use at start ([`ScriptOptions::max_memory_bytes`], `[serve.lua]
//! max_memory_kb`), and an instruction
//! budget ([`ScriptOptions::max_interrupts`]). What the handler hands to Rust (its returned
//! value, `emit`, `state.put`, `wraith.json_encode`) is converted under a limit of its own
//! (`convert`: 16 times the memory budget, plus a JSON request body's length as many times),
//! since Lua's limit does not see the copies a conversion writes. Luau has no per-instruction
//! hook: its interrupt fires at function calls and loop back-edges, so the budget counts
//! those. 100,000 interrupts bound the calls plus loop iterations; straight-line code between
//! two of them is not counted (it cannot run long without looping or calling).

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use mlua::chunk::{ChunkMode, Compiler};
use mlua::{Function, Lua, LuaOptions, LuaSerdeExt, MultiValue, StdLib, Table, Value, VmState};
use serde::de::DeserializeSeed;
use serde_json::Value as Json;
use wraith_engine::{
    Handler, HandlerBody, HandlerEnv, HandlerError, HandlerRequest, HandlerResponse,
};

use crate::convert::{CountedJson, OutputLimit, Tally};

/// Per-invocation budgets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScriptOptions {
    /// Memory the handler may allocate beyond the VM's start (`[serve.lua] max_memory_kb`).
    pub max_memory_bytes: usize,
    /// CPU time one invocation may use (of the thread that runs it).
    pub deadline: Duration,
    /// Interrupts (function calls and loop back-edges) one invocation may take.
    pub max_interrupts: u64,
}

impl Default for ScriptOptions {
    fn default() -> Self {
        ScriptOptions {
            max_memory_bytes: 1024 * 1024,
            deadline: Duration::from_millis(100),
            max_interrupts: 100_000,
        }
    }
}

/// Largest string `wraith.json_decode` accepts.
const MAX_JSON_DECODE_BYTES: usize = 1024 * 1024;
/// Deepest nesting `wraith.json_decode`/`json_encode` accept.
const MAX_JSON_DEPTH: usize = 64;

/// A compiled `lua/lib/` module.
#[derive(Debug, Clone)]
pub(crate) struct Library {
    pub chunk_name: String,
    pub bytecode: Vec<u8>,
}

/// Compile Lua/Luau source to Luau bytecode.
pub fn compile(source: &[u8]) -> Result<Vec<u8>, String> {
    Compiler::new().compile(source).map_err(|e| error_text(&e))
}

/// One handler file, compiled once, run in a fresh VM per invocation.
pub struct LuaHandler {
    name: String,
    chunk_name: String,
    bytecode: Vec<u8>,
    libs: Arc<BTreeMap<String, Library>>,
    opts: ScriptOptions,
}

impl LuaHandler {
    pub(crate) fn new(
        name: String,
        chunk_name: String,
        bytecode: Vec<u8>,
        libs: Arc<BTreeMap<String, Library>>,
        opts: ScriptOptions,
    ) -> LuaHandler {
        LuaHandler {
            name,
            chunk_name,
            bytecode,
            libs,
            opts,
        }
    }

    /// A handler from source text (tests and tools): `name` is its binding name.
    pub fn from_source(
        name: &str,
        source: &str,
        libs: &[(&str, &str)],
        opts: ScriptOptions,
    ) -> Result<LuaHandler, String> {
        let mut compiled = BTreeMap::new();
        for (lib, src) in libs {
            compiled.insert(
                (*lib).to_string(),
                Library {
                    chunk_name: format!("lua/lib/{lib}.lua"),
                    bytecode: compile(src.as_bytes())?,
                },
            );
        }
        Ok(LuaHandler::new(
            name.to_string(),
            format!("lua/handlers/{name}.lua"),
            compile(source.as_bytes())?,
            Arc::new(compiled),
            opts,
        ))
    }

    /// The handler's name (file stem).
    pub fn name(&self) -> &str {
        &self.name
    }
}

impl Handler for LuaHandler {
    fn call(
        &self,
        req: &HandlerRequest<'_>,
        env: &mut dyn HandlerEnv,
    ) -> Result<HandlerResponse, HandlerError> {
        let trip = Arc::new(AtomicU8::new(TRIP_NONE));
        match self.invoke(req, env, &trip) {
            Ok(resp) => Ok(resp),
            Err(e) => Err(HandlerError::new(match trip.load(Ordering::Relaxed) {
                TRIP_DEADLINE => format!(
                    "{}: exceeded the {} ms CPU-time budget",
                    self.chunk_name,
                    self.opts.deadline.as_millis()
                ),
                TRIP_INSTRUCTIONS => format!(
                    "{}: exceeded the instruction budget ({} interrupts: function calls and loop \
                     iterations)",
                    self.chunk_name, self.opts.max_interrupts
                ),
                _ => match &e {
                    mlua::Error::MemoryError(_) => format!(
                        "{}: exceeded the memory budget of {} KiB ([serve.lua] max_memory_kb)",
                        self.chunk_name,
                        self.opts.max_memory_bytes / 1024
                    ),
                    other => error_text(other),
                },
            })),
        }
    }
}

/// How many times a JSON request body's length its converted `req.json` may take on top of a
/// handler's memory budget.
const JSON_ALLOWANCE: usize = 8;

const TRIP_NONE: u8 = 0;
const TRIP_DEADLINE: u8 = 1;
const TRIP_INSTRUCTIONS: u8 = 2;

/// What `emit` collected.
#[derive(Default)]
struct Emitted {
    touched: bool,
    status: Option<u16>,
    headers: Vec<(String, String)>,
    body: Option<HandlerBody>,
}

impl LuaHandler {
    fn invoke(
        &self,
        req: &HandlerRequest<'_>,
        env: &mut dyn HandlerEnv,
        trip: &Arc<AtomicU8>,
    ) -> mlua::Result<HandlerResponse> {
        let lua = Lua::new_with(
            StdLib::COROUTINE
                | StdLib::TABLE
                | StdLib::STRING
                | StdLib::UTF8
                | StdLib::BIT
                | StdLib::MATH
                | StdLib::BUFFER,
            LuaOptions::default(),
        )?;
        let env = RefCell::new(env);
        let emitted = RefCell::new(Emitted::default());
        let env = &env;
        let emitted = &emitted;
        let libs = &self.libs;
        let limit = OutputLimit::new(
            self.opts.max_memory_bytes,
            req.body.len(),
            req.json.is_some(),
        );

        let (value, emit_state) = lua.scope(|scope| {
            let g = lua.globals();
            for name in [
                "loadstring",
                "load",
                "dofile",
                "loadfile",
                "require",
                "getfenv",
                "setfenv",
                "newproxy",
                "rawget",
                "rawset",
                "rawequal",
                "rawlen",
                "collectgarbage",
                "debug",
                "io",
                "os",
                "package",
            ] {
                g.raw_set(name, Value::Nil)?;
            }
            g.raw_set("print", lua.create_function(|_, _: MultiValue| Ok(()))?)?;
            install_deterministic_names(&lua, scope, &g)?;

            // Randomness and time from the session, installed before the sandbox freezes the
            // libraries.
            let math: Table = g.get("math")?;
            math.raw_set(
                "random",
                plain_errors(&lua, scope, move |_, args: MultiValue| {
                    let r = env.borrow_mut().random_u64();
                    math_random(r, &args)
                })?,
            )?;
            math.raw_set(
                "randomseed",
                lua.create_function(|_, _: MultiValue| Ok(()))?,
            )?;
            let os = lua.create_table()?;
            os.raw_set(
                "time",
                plain_errors(&lua, scope, move |_, t: Option<Table>| match t {
                    Some(t) => crate::os_time::time_of(&t),
                    None => Ok(env.borrow_mut().now_us().div_euclid(1_000_000)),
                })?,
            )?;
            os.raw_set(
                "date",
                plain_errors(
                    &lua,
                    scope,
                    move |lua, (format, time): (Option<String>, Option<Value>)| {
                        let now = env.borrow_mut().now_us().div_euclid(1_000_000);
                        crate::os_time::date_of(lua, now, format, time)
                    },
                )?,
            )?;
            os.raw_set(
                "clock",
                plain_errors(&lua, scope, move |_, ()| {
                    Ok(env.borrow_mut().now_us() as f64 / 1_000_000.0)
                })?,
            )?;
            g.raw_set("os", os)?;

            g.raw_set("req", request_table(&lua, scope, req)?)?;
            g.raw_set("emit", emit_table(&lua, scope, emitted, limit)?)?;
            g.raw_set("state", state_table(&lua, scope, env, limit)?)?;
            g.raw_set("clock", clock_table(&lua, scope, env)?)?;
            g.raw_set("wraith", wraith_table(&lua, scope, libs, limit)?)?;

            lua.sandbox(true)?;

            // The budget is on top of the request as built (its bytes are not the handler's
            // allocation); `req.json` raises it when first read (see `request_table`).
            let start_memory = lua.used_memory();
            lua.set_memory_limit(start_memory.saturating_add(self.opts.max_memory_bytes))?;
            let budget = crate::cpu_budget::CpuBudget::start(self.opts.deadline);
            let max = self.opts.max_interrupts;
            let count = AtomicU64::new(0);
            let trip_flag = Arc::clone(trip);
            lua.set_interrupt(move |_| {
                if count.fetch_add(1, Ordering::Relaxed) >= max {
                    trip_flag.store(TRIP_INSTRUCTIONS, Ordering::Relaxed);
                    return Err(mlua::Error::runtime("instruction budget exceeded"));
                }
                if budget.spent() {
                    trip_flag.store(TRIP_DEADLINE, Ordering::Relaxed);
                    return Err(mlua::Error::runtime("CPU-time budget exceeded"));
                }
                Ok(VmState::Continue)
            });

            let chunk = lua
                .load(&self.bytecode[..])
                .set_name(format!("={}", self.chunk_name))
                .set_mode(ChunkMode::Binary)
                .into_function()?;
            let mut value: Value = chunk
                .call::<MultiValue>(())?
                .into_iter()
                .next()
                .unwrap_or(Value::Nil);
            if let Value::Function(f) = &value {
                let req_value: Value = lua.globals().get("req")?;
                value = f
                    .call::<MultiValue>(req_value)?
                    .into_iter()
                    .next()
                    .unwrap_or(Value::Nil);
            }
            // A returned value is the body unless an emit call already set one: `emit.status`
            // or `emit.header` with a returned table answer that table with that status.
            let (touched, emitted_body) = {
                let e = emitted.borrow();
                (e.touched, e.body.is_some())
            };
            let returned = match value {
                _ if emitted_body => None,
                Value::Nil if touched => None,
                Value::Nil => {
                    return Err(mlua::Error::runtime(
                        "the handler produced no response: call emit.json / emit.body / \
                         emit.status, or return a table or a string",
                    ));
                }
                Value::String(s) => Some(HandlerBody::Bytes(bytes::Bytes::from(
                    s.as_bytes().to_vec(),
                ))),
                other => Some(HandlerBody::Json(to_json(
                    other,
                    "the handler's return value",
                    limit,
                )?)),
            };
            Ok((returned, std::mem::take(&mut *emitted.borrow_mut())))
        })?;
        lua.remove_interrupt();

        let (status, headers, body) = match value {
            Some(body) => (emit_state.status.unwrap_or(200), emit_state.headers, body),
            None => (
                emit_state.status.unwrap_or(200),
                emit_state.headers,
                emit_state.body.unwrap_or(HandlerBody::Empty),
            ),
        };
        let mut headers = headers;
        if matches!(body, HandlerBody::Bytes(_))
            && !headers
                .iter()
                .any(|(k, _)| k.eq_ignore_ascii_case("content-type"))
        {
            headers.push((
                "content-type".to_string(),
                "text/plain; charset=utf-8".to_string(),
            ));
        }
        Ok(HandlerResponse {
            status,
            headers,
            body,
        })
    }
}

/// Luau source of `tostring`: a value Lua would name by its address gets its deterministic
/// name instead, anything else the built-in's text.
const TOSTRING_WRAPPER: &str = "local rawtostring, nameof = ...
return function(...)
  local name = nameof(...)
  if name ~= nil then return name end
  return rawtostring(...)
end";

/// Luau source of `string.format` (and so of string interpolation, which compiles to it): the
/// values `%*` would name by their address are given as their deterministic names.
const FORMAT_WRAPPER: &str = "local rawformat, named = ...
return function(fmt, ...)
  return rawformat(fmt, named(...))
end";

/// Replace `tostring` and `string.format` before the sandbox freezes them, so no text a
/// handler makes holds a memory address: Luau writes a table, function, coroutine or buffer
/// without `__tostring` as `table: 0x…`, which differs from run to run and from one session's
/// traffic to another's, breaking the same-requests-same-answers promise. Such a value is
/// named `table: #1`, `function: #2`… instead, numbered in the order this invocation first
/// names it, and the same value keeps its name.
fn install_deterministic_names<'s>(
    lua: &Lua,
    scope: &'s mlua::Scope<'s, '_>,
    g: &Table,
) -> mlua::Result<()> {
    let names = lua.create_table()?;
    let count = std::cell::Cell::new(0u64);
    let name_of = move |lua: &Lua, v: &Value| -> mlua::Result<Option<mlua::LuaString>> {
        let ty = match v {
            Value::Table(t) => {
                let custom = match t.metatable() {
                    Some(mt) => !mt.raw_get::<Value>("__tostring")?.is_nil(),
                    None => false,
                };
                if custom {
                    return Ok(None);
                }
                "table"
            }
            Value::Function(_) => "function",
            Value::Thread(_) => "thread",
            Value::Buffer(_) => "buffer",
            _ => return Ok(None),
        };
        if let Value::String(known) = names.raw_get::<Value>(v)? {
            return Ok(Some(known));
        }
        count.set(count.get() + 1);
        let name = lua.create_string(format!("{ty}: #{}", count.get()))?;
        names.raw_set(v, &name)?;
        Ok(Some(name))
    };
    let name_of = std::rc::Rc::new(name_of);
    let one = std::rc::Rc::clone(&name_of);
    let nameof = scope.create_function(move |lua, args: MultiValue| match args.front() {
        Some(v) => one(lua, v),
        None => Ok(None),
    })?;
    let named = scope.create_function(move |lua, args: MultiValue| {
        args.into_iter()
            .map(|v| {
                Ok(match name_of(lua, &v)? {
                    Some(name) => Value::String(name),
                    None => v,
                })
            })
            .collect::<mlua::Result<MultiValue>>()
    })?;
    static TOSTRING: OnceLock<Result<Vec<u8>, String>> = OnceLock::new();
    static FORMAT: OnceLock<Result<Vec<u8>, String>> = OnceLock::new();
    let wrapper = |name: &str, compiled: &OnceLock<Result<Vec<u8>, String>>, source: &str| {
        let bytecode = compiled
            .get_or_init(|| compile(source.as_bytes()))
            .as_ref()
            .map_err(|e| {
                mlua::Error::runtime(format!(
                    "internal: the {name} wrapper does not compile: {e}"
                ))
            })?;
        lua.load(&bytecode[..])
            .set_name(format!("={name}"))
            .set_mode(ChunkMode::Binary)
            .into_function()
    };
    let tostring: Function = g.get("tostring")?;
    let deterministic: Function =
        wrapper("tostring", &TOSTRING, TOSTRING_WRAPPER)?.call((tostring, nameof))?;
    g.raw_set("tostring", deterministic)?;
    let string: Table = g.get("string")?;
    let format: Function = string.get("format")?;
    let deterministic: Function =
        wrapper("format", &FORMAT, FORMAT_WRAPPER)?.call((format, named))?;
    string.raw_set("format", deterministic)?;
    Ok(())
}

/// Luau source of the wrapper that turns a `(ok, ...)` answer into a plain-string `error`.
const PLAIN_ERRORS_WRAPPER: &str = "local f = ...
return function(...)
  local r = table.pack(f(...))
  if not r[1] then error(r[2], 2) end
  return table.unpack(r, 2, r.n)
end";

fn plain_errors_wrapper() -> &'static Result<Vec<u8>, String> {
    static WRAPPER: std::sync::OnceLock<Result<Vec<u8>, String>> = std::sync::OnceLock::new();
    WRAPPER.get_or_init(|| compile(PLAIN_ERRORS_WRAPPER.as_bytes()))
}

/// A scoped API function whose failures raise plain strings (`"state.put: …"`, prefixed with
/// the handler's file and line), so a handler can `pcall` it and read the message. A memory
/// error stays what it is: the budget, not the function, failed.
fn plain_errors<'s, A, R, F>(
    lua: &Lua,
    scope: &'s mlua::Scope<'s, '_>,
    f: F,
) -> mlua::Result<Function>
where
    F: Fn(&Lua, A) -> mlua::Result<R> + 's,
    A: mlua::FromLuaMulti,
    R: mlua::IntoLuaMulti,
{
    let inner = scope.create_function(move |lua, args: A| match f(lua, args) {
        Ok(r) => {
            let mut out = r.into_lua_multi(lua)?;
            out.push_front(Value::Boolean(true));
            Ok(out)
        }
        Err(mlua::Error::MemoryError(m)) => Err(mlua::Error::MemoryError(m)),
        Err(e) => Ok(MultiValue::from_vec(vec![
            Value::Boolean(false),
            Value::String(lua.create_string(error_text(&e))?),
        ])),
    })?;
    let bytecode = plain_errors_wrapper().as_ref().map_err(|e| {
        mlua::Error::runtime(format!("internal: the error wrapper does not compile: {e}"))
    })?;
    lua.load(&bytecode[..])
        .set_name("=wraith")
        .set_mode(ChunkMode::Binary)
        .call(inner)
}

/// `math.random()`, `math.random(m)`, `math.random(m, n)` from one RNG draw.
fn math_random(r: u64, args: &MultiValue) -> mlua::Result<Value> {
    let int_arg = |i: usize| -> mlua::Result<i64> {
        match args.get(i) {
            Some(Value::Integer(n)) => Ok(*n),
            Some(Value::Number(n)) if n.fract() == 0.0 && n.is_finite() => Ok(*n as i64),
            _ => Err(mlua::Error::runtime(format!(
                "math.random: argument #{} must be an integer",
                i + 1
            ))),
        }
    };
    let (lo, hi) = match args.len() {
        0 => {
            // 53 random bits: a double in [0, 1).
            return Ok(Value::Number((r >> 11) as f64 / (1u64 << 53) as f64));
        }
        1 => (1, int_arg(0)?),
        _ => (int_arg(0)?, int_arg(1)?),
    };
    if lo > hi {
        return Err(mlua::Error::runtime(format!(
            "math.random: interval is empty ({lo} > {hi})"
        )));
    }
    let span = (hi as i128 - lo as i128 + 1) as u128;
    let v = lo as i128 + (r as u128 % span) as i128;
    Ok(Value::Number(v as f64))
}

fn request_table<'s>(
    lua: &Lua,
    scope: &'s mlua::Scope<'s, '_>,
    req: &'s HandlerRequest<'_>,
) -> mlua::Result<Table> {
    let t = lua.create_table()?;
    t.raw_set("method", req.method)?;
    t.raw_set("path", req.path)?;
    t.raw_set("route", req.route)?;
    t.raw_set("handler", req.handler)?;
    let headers = lua.create_table()?;
    for (k, v) in req.headers {
        let k = k.to_ascii_lowercase();
        let joined = match headers.raw_get::<Option<String>>(k.as_str())? {
            Some(prev) => format!("{prev}, {v}"),
            None => v.clone(),
        };
        headers.raw_set(k, joined)?;
    }
    t.raw_set("headers", headers)?;
    // `query` holds each parameter's first value; `query_all` every value of each, in order
    // (`?tag=a&tag=b`), for the APIs that repeat a parameter.
    let query = lua.create_table()?;
    let query_all = lua.create_table()?;
    for (k, v) in req.query {
        if query.raw_get::<Value>(k.as_str())?.is_nil() {
            query.raw_set(k.as_str(), v.as_str())?;
        }
        let values = match query_all.raw_get::<Option<Table>>(k.as_str())? {
            Some(values) => values,
            None => {
                let values = lua.create_table()?;
                query_all.raw_set(k.as_str(), &values)?;
                values
            }
        };
        values.raw_push(v.as_str())?;
    }
    t.raw_set("query", query)?;
    t.raw_set("query_all", query_all)?;
    let params = lua.create_table()?;
    for (k, v) in req.params {
        params.raw_set(k.as_str(), v.as_str())?;
    }
    t.raw_set("params", params)?;
    if req.body.is_empty() {
        t.raw_set("body", Value::Nil)?;
    } else {
        t.raw_set("body", lua.create_string(req.body)?)?;
    }
    // `req.json` is converted on first read, once the handler runs: under its memory budget
    // and deadline, and only for a handler that reads it. Converted up front, a 16 MiB JSON
    // body became a gigabyte of Lua tables before any budget applied.
    // Its first read raises the memory budget by JSON_ALLOWANCE times the body's length, as
    // Lua tables hold a small JSON value in many times its text: only for a handler that
    // reads it, so a JSON body lends no memory to one that does not.
    if let Some(json) = req.json {
        let converted: RefCell<Option<Value>> = RefCell::new(None);
        let allowance = req.body.len().saturating_mul(JSON_ALLOWANCE);
        let index = scope.create_function(move |lua, (_, key): (Value, Value)| {
            if !matches!(&key, Value::String(k) if k.as_bytes().as_ref() == b"json") {
                return Ok(Value::Nil);
            }
            if let Some(v) = converted.borrow().as_ref() {
                return Ok(v.clone());
            }
            // Nothing allocates between the two calls: the first only reads the limit back
            // (0 is no limit, which stays none).
            let limit = lua.set_memory_limit(usize::MAX)?;
            let raised = if limit == 0 {
                0
            } else {
                limit.saturating_add(allowance)
            };
            lua.set_memory_limit(raised)?;
            let v = lua.to_value(json)?;
            *converted.borrow_mut() = Some(v.clone());
            Ok(v)
        })?;
        let meta = lua.create_table()?;
        meta.raw_set("__index", index)?;
        t.set_metatable(Some(meta))?;
    }
    Ok(t)
}

fn emit_table<'s>(
    lua: &Lua,
    scope: &'s mlua::Scope<'s, '_>,
    emitted: &'s RefCell<Emitted>,
    limit: OutputLimit,
) -> mlua::Result<Table> {
    let t = lua.create_table()?;
    t.raw_set(
        "status",
        plain_errors(lua, scope, move |_, v: Value| {
            let s = status_arg("emit.status", &v)?;
            let mut e = emitted.borrow_mut();
            e.touched = true;
            e.status = Some(s);
            Ok(())
        })?,
    )?;
    t.raw_set(
        "header",
        plain_errors(lua, scope, move |_, (k, v): (Value, Value)| {
            let name = string_arg("emit.header", "name", &k)?;
            let one = |v: &Value| match v {
                Value::Integer(n) => Ok(n.to_string()),
                Value::Number(n) if n.is_finite() => Ok(n.to_string()),
                Value::Number(n) => Err(mlua::Error::runtime(format!(
                    "emit.header: `{name}`: {n} is not a value to send"
                ))),
                other => string_arg("emit.header", "value", other),
            };
            // The headers the handler emitted are held to the output limit in all: a sequence
            // naming one long string many times, or many names, is written out each time.
            let tally = Tally::new(limit);
            let held: usize = emitted
                .borrow()
                .headers
                .iter()
                .filter(|(h, _)| !h.eq_ignore_ascii_case(&name))
                .map(|(h, v)| h.len().saturating_add(v.len()))
                .sum();
            tally.charge(held);
            let counted = |v: &Value| {
                let value = one(v)?;
                if tally.charge(name.len().saturating_add(value.len())) {
                    Ok(value)
                } else {
                    Err(mlua::Error::runtime(
                        limit.exceeded(&format!("emit.header: `{name}`")),
                    ))
                }
            };
            // A sequence of values sends the header once per value, in order (`Set-Cookie`,
            // `Link`, `Vary`…), where joining them with `, ` would change their meaning.
            let values = match &v {
                Value::Table(t) => t
                    .clone()
                    .sequence_values::<Value>()
                    .map(|item| counted(&item?))
                    .collect::<mlua::Result<Vec<String>>>()?,
                other => vec![counted(other)?],
            };
            // The rules the server sends headers by: a header it could not send would be
            // dropped from the answer without the handler knowing.
            if http::HeaderName::from_bytes(name.as_bytes()).is_err() {
                return Err(mlua::Error::runtime(format!(
                    "emit.header: {name:?} is not a valid header name (letters, digits and \
                     !#$%&'*+-.^_`|~ only: no spaces, colons, control or non-ASCII characters)"
                )));
            }
            if let Some(v) = values
                .iter()
                .find(|v| http::HeaderValue::from_bytes(v.as_bytes()).is_err())
            {
                return Err(mlua::Error::runtime(format!(
                    "emit.header: the value {v:?} of `{name}` is not a valid header value (no \
                     line breaks or other control characters)"
                )));
            }
            let mut e = emitted.borrow_mut();
            e.touched = true;
            e.headers.retain(|(h, _)| !h.eq_ignore_ascii_case(&name));
            e.headers
                .extend(values.into_iter().map(|value| (name.clone(), value)));
            Ok(())
        })?,
    )?;
    t.raw_set(
        "json",
        plain_errors(lua, scope, move |_, v: Value| {
            let j = to_json(v, "emit.json", limit)?;
            let mut e = emitted.borrow_mut();
            e.touched = true;
            e.body = Some(HandlerBody::Json(j));
            Ok(())
        })?,
    )?;
    t.raw_set(
        "body",
        plain_errors(lua, scope, move |_, v: Value| {
            let body = match v {
                Value::Nil => HandlerBody::Empty,
                Value::String(s) => HandlerBody::Bytes(bytes::Bytes::from(s.as_bytes().to_vec())),
                Value::Table(_) => HandlerBody::Json(to_json(v, "emit.body", limit)?),
                Value::Buffer(b) => HandlerBody::Bytes(bytes::Bytes::from(b.to_vec())),
                other => {
                    return Err(mlua::Error::runtime(format!(
                        "emit.body: expected a string or a table, got {}",
                        other.type_name()
                    )));
                }
            };
            let mut e = emitted.borrow_mut();
            e.touched = true;
            e.body = Some(body);
            Ok(())
        })?,
    )?;
    t.raw_set(
        "error",
        plain_errors(lua, scope, move |_, (s, c, m): (Value, Value, Value)| {
            let status = status_arg("emit.error", &s)?;
            let code = string_arg("emit.error", "code", &c)?;
            let message = string_arg("emit.error", "message", &m)?;
            let mut e = emitted.borrow_mut();
            e.touched = true;
            e.status = Some(status);
            e.body = Some(HandlerBody::Json(
                serde_json::json!({"error": {"code": code, "message": message}}),
            ));
            Ok(())
        })?,
    )?;
    Ok(t)
}

type EnvCell<'e> = RefCell<&'e mut dyn HandlerEnv>;

fn state_table<'s, 'e: 's>(
    lua: &Lua,
    scope: &'s mlua::Scope<'s, '_>,
    env: &'s EnvCell<'e>,
    limit: OutputLimit,
) -> mlua::Result<Table> {
    let t = lua.create_table()?;
    t.raw_set(
        "get",
        plain_errors(lua, scope, move |lua, (ty, id): (Value, Value)| {
            let ty = name_arg("state.get", "type", &ty)?;
            let id = id_arg("state.get", &id)?;
            let found = env.borrow().get(&ty, &id);
            match found {
                Some(v) => lua.to_value(&v),
                None => Ok(Value::Nil),
            }
        })?,
    )?;
    t.raw_set(
        "put",
        plain_errors(
            lua,
            scope,
            move |lua, (ty, id, rec): (Value, Value, Value)| {
                let ty = name_arg("state.put", "type", &ty)?;
                let id = id_arg("state.put", &id)?;
                if rec.is_nil() {
                    return Err(mlua::Error::runtime(
                        "state.put(type, id, record): missing argument `record`",
                    ));
                }
                let rec = to_json(rec, "state.put", limit)?;
                let stored = env
                    .borrow_mut()
                    .put(&ty, &id, &rec)
                    .map_err(|e| mlua::Error::runtime(e.message))?;
                lua.to_value(&stored)
            },
        )?,
    )?;
    t.raw_set(
        "delete",
        plain_errors(lua, scope, move |_, (ty, id): (Value, Value)| {
            let ty = name_arg("state.delete", "type", &ty)?;
            let id = id_arg("state.delete", &id)?;
            env.borrow_mut()
                .delete(&ty, &id)
                .map_err(|e| mlua::Error::runtime(e.message))
        })?,
    )?;
    t.raw_set(
        "list",
        plain_errors(lua, scope, move |lua, ty: Value| {
            let ty = name_arg("state.list", "type", &ty)?;
            let items = env.borrow().list(&ty);
            json_array(lua, &items)
        })?,
    )?;
    t.raw_set(
        "query",
        plain_errors(lua, scope, move |lua, args: MultiValue| {
            if args.len() < 3 {
                return Err(mlua::Error::runtime(
                    "state.query(type, field, value): missing argument (pass nil explicitly to \
                     match JSON null)",
                ));
            }
            let ty = name_arg("state.query", "type", &args[0])?;
            let field = name_arg("state.query", "field", &args[1])?;
            let value = match &args[2] {
                Value::Nil => Json::Null,
                other => to_json(other.clone(), "state.query", limit)?,
            };
            let items = env.borrow().query(&ty, &field, &value);
            json_array(lua, &items)
        })?,
    )?;
    t.raw_set(
        "count",
        plain_errors(lua, scope, move |_, ty: Value| {
            let ty = name_arg("state.count", "type", &ty)?;
            Ok(env.borrow().count(&ty) as i64)
        })?,
    )?;
    t.raw_set(
        "new_id",
        plain_errors(lua, scope, move |lua, ty: Value| {
            let ty = name_arg("state.new_id", "type", &ty)?;
            let id = env
                .borrow_mut()
                .new_id(&ty)
                .map_err(|e| mlua::Error::runtime(e.message))?;
            lua.to_value(&id)
        })?,
    )?;
    t.raw_set(
        "counter",
        plain_errors(lua, scope, move |_, name: Value| {
            let name = name_arg("state.counter", "name", &name)?;
            Ok(env.borrow_mut().counter(&name))
        })?,
    )?;
    Ok(t)
}

fn clock_table<'s, 'e: 's>(
    lua: &Lua,
    scope: &'s mlua::Scope<'s, '_>,
    env: &'s EnvCell<'e>,
) -> mlua::Result<Table> {
    let t = lua.create_table()?;
    t.raw_set(
        "now",
        plain_errors(lua, scope, move |_, ()| {
            Ok(env.borrow_mut().now_us() as f64 / 1_000_000.0)
        })?,
    )?;
    t.raw_set(
        "advance",
        plain_errors(lua, scope, move |_, secs: Option<f64>| {
            let secs = secs.unwrap_or(1.0);
            if !secs.is_finite() || secs < 0.0 {
                return Err(mlua::Error::runtime(format!(
                    "clock.advance: seconds must be a finite number ≥ 0, got {secs}"
                )));
            }
            env.borrow_mut()
                .advance_us((secs * 1_000_000.0).round() as i64)
                .map_err(|e| mlua::Error::runtime(e.message))
        })?,
    )?;
    Ok(t)
}

fn wraith_table<'s>(
    lua: &Lua,
    scope: &'s mlua::Scope<'s, '_>,
    libs: &'s Arc<BTreeMap<String, Library>>,
    limit: OutputLimit,
) -> mlua::Result<Table> {
    let t = lua.create_table()?;
    let loaded = lua.create_table()?;
    let loading: RefCell<Vec<String>> = RefCell::new(Vec::new());
    t.raw_set(
        "import",
        plain_errors(lua, scope, move |lua, name: Value| {
            let raw = string_arg("wraith.import", "name", &name)?;
            let key = raw
                .trim_end_matches(".luau")
                .trim_end_matches(".lua")
                .replace('.', "/");
            let cached: Value = loaded.raw_get(key.as_str())?;
            if !cached.is_nil() {
                return Ok(cached);
            }
            let Some(lib) = libs.get(&key) else {
                let available: Vec<&str> = libs.keys().map(String::as_str).collect();
                return Err(mlua::Error::runtime(format!(
                    "wraith.import: no module `{raw}` in lua/lib/ (available: {})",
                    if available.is_empty() {
                        "none".to_string()
                    } else {
                        available.join(", ")
                    }
                )));
            };
            if loading.borrow().contains(&key) {
                return Err(mlua::Error::runtime(format!(
                    "wraith.import: module `{key}` imports itself (cycle: {} → {key})",
                    loading.borrow().join(" → ")
                )));
            }
            // Each module runs in its own global scope that reads through to the handler's.
            let module_env = lua.create_table()?;
            let mt = lua.create_table()?;
            mt.raw_set("__index", lua.globals())?;
            module_env.set_metatable(Some(mt))?;
            let f: Function = lua
                .load(&lib.bytecode[..])
                .set_name(format!("={}", lib.chunk_name))
                .set_mode(ChunkMode::Binary)
                .set_environment(module_env.clone())
                .into_function()?;
            loading.borrow_mut().push(key.clone());
            let result = f.call::<MultiValue>(());
            loading.borrow_mut().pop();
            let value = match result?.into_iter().next() {
                Some(v) if !v.is_nil() => v,
                _ => Value::Table(module_env),
            };
            loaded.raw_set(key.as_str(), value.clone())?;
            Ok(value)
        })?,
    )?;
    t.raw_set(
        "json_decode",
        lua.create_function(|lua, s: Value| {
            let text = match &s {
                Value::String(s) => s.as_bytes().to_vec(),
                other => {
                    return Ok((
                        Value::Nil,
                        Some(format!("expected a string, got {}", other.type_name())),
                    ));
                }
            };
            if text.len() > MAX_JSON_DECODE_BYTES {
                return Ok((
                    Value::Nil,
                    Some(format!(
                        "the string is {} bytes; json_decode takes at most {MAX_JSON_DECODE_BYTES}",
                        text.len()
                    )),
                ));
            }
            match serde_json::from_slice::<Json>(&text) {
                Ok(v) if depth(&v) > MAX_JSON_DEPTH => Ok((
                    Value::Nil,
                    Some(format!("nested deeper than {MAX_JSON_DEPTH} levels")),
                )),
                Ok(v) => Ok((lua.to_value(&v)?, None)),
                Err(e) => Ok((Value::Nil, Some(e.to_string()))),
            }
        })?,
    )?;
    t.raw_set(
        "json_encode",
        plain_errors(lua, scope, move |_, v: Value| {
            let j = to_json(v, "wraith.json_encode", limit)?;
            serde_json::to_string(&j).map_err(|e| mlua::Error::runtime(e.to_string()))
        })?,
    )?;
    t.raw_set("array_mt", lua.array_metatable())?;
    t.raw_set("null", lua.null())?;
    Ok(t)
}

/// A Lua value as JSON: keys sorted (Lua tables have no order), mixed tables refused.
///
/// The conversion is held to `limit` as it goes (`convert`): a value the Lua graph names many
/// times is written each time, so a small graph could otherwise fill the host's memory.
fn to_json(v: Value, what: &str, limit: OutputLimit) -> mlua::Result<Json> {
    if let Some(problem) = unencodable(&v, 0, &mut std::collections::HashSet::new()) {
        return Err(mlua::Error::runtime(format!(
            "{what}: the value cannot be encoded as JSON ({problem})"
        )));
    }
    let opts = mlua::serde::DeserializeOptions::new()
        .sort_keys(true)
        .deny_unsupported_types(true)
        .deny_recursive_tables(true)
        .recursion_limit(MAX_JSON_DEPTH);
    let tally = Tally::new(limit);
    CountedJson { tally: &tally }
        .deserialize(mlua::serde::Deserializer::new_with_options(v, opts))
        .map_err(|e| {
            mlua::Error::runtime(if tally.over() {
                limit.exceeded(what)
            } else {
                format!(
                    "{what}: the value cannot be encoded as JSON ({})",
                    error_text(&e)
                )
            })
        })
}

/// What in `v` JSON cannot carry that the conversion would not refuse by itself: a NaN or an
/// infinity (the conversion turns it into `null`, so a stored field would silently vanish), or
/// a table holding both a sequence and other keys, which neither a JSON array nor a JSON object
/// can carry without losing some of it. (An empty table is an object unless it carries
/// `wraith.array_mt`.)
fn unencodable(
    v: &Value,
    level: usize,
    seen: &mut std::collections::HashSet<usize>,
) -> Option<String> {
    if let Value::Number(n) = v
        && !n.is_finite()
    {
        return Some(format!("{n} is not a number JSON can carry"));
    }
    let Value::Table(t) = v else {
        return None;
    };
    if level > MAX_JSON_DEPTH {
        return None; // the conversion reports the depth itself
    }
    // Each table once: shared and cyclic tables are the conversion's to report.
    if !seen.insert(t.to_pointer() as usize) {
        return None;
    }
    let len = t.raw_len();
    for pair in t.pairs::<Value, Value>() {
        let Ok((k, item)) = pair else {
            continue;
        };
        let in_sequence = match k {
            Value::Integer(i) => i >= 1 && (i as usize) <= len,
            Value::Number(n) => n.fract() == 0.0 && n >= 1.0 && (n as usize) <= len,
            _ => false,
        };
        if len > 0 && !in_sequence {
            return Some(format!(
                "a table mixes a list of {len} item(s) with other keys such as {}",
                match &k {
                    Value::String(s) => format!("`{}`", s.to_string_lossy()),
                    Value::Integer(n) => n.to_string(),
                    Value::Number(n) => n.to_string(),
                    // Not its Debug text, which holds the key's memory address.
                    other => format!("a {} key", other.type_name()),
                }
            ));
        }
        if let Some(p) = unencodable(&item, level + 1, seen) {
            return Some(p);
        }
    }
    None
}

fn depth(v: &Json) -> usize {
    match v {
        Json::Array(a) => 1 + a.iter().map(depth).max().unwrap_or(0),
        Json::Object(m) => 1 + m.values().map(depth).max().unwrap_or(0),
        _ => 0,
    }
}

/// A JSON array as a Lua sequence that encodes back as `[]` even when empty.
fn json_array(lua: &Lua, items: &[Json]) -> mlua::Result<Table> {
    let t = lua.create_table_with_capacity(items.len(), 0)?;
    for (i, item) in items.iter().enumerate() {
        t.raw_set(i + 1, lua.to_value(item)?)?;
    }
    t.set_metatable(Some(lua.array_metatable()))?;
    Ok(t)
}

fn string_arg(func: &str, arg: &str, v: &Value) -> mlua::Result<String> {
    match v {
        Value::String(s) => Ok(s.to_string_lossy()),
        Value::Nil => Err(mlua::Error::runtime(format!(
            "{func}: missing argument `{arg}`"
        ))),
        other => Err(mlua::Error::runtime(format!(
            "{func}: argument `{arg}` must be a string, got {}",
            other.type_name()
        ))),
    }
}

/// A string that names something in the session (a type, an id, a field, a counter): its bytes
/// must be UTF-8 text. Read lossily, `"cus_\255"` and `"cus_\254"` would both name `cus_�`, one
/// record under two ids.
fn name_arg(func: &str, arg: &str, v: &Value) -> mlua::Result<String> {
    match v {
        Value::String(s) => match s.to_str() {
            Ok(text) => Ok(text.to_string()),
            Err(_) => Err(mlua::Error::runtime(format!(
                "{func}: argument `{arg}` is not UTF-8 text (\"{}\"); a type, id, field or \
                 counter name must be",
                s.as_bytes().escape_ascii()
            ))),
        },
        other => string_arg(func, arg, other),
    }
}

/// An entity id: a string of UTF-8 text, or an integral number spelled without a fraction.
fn id_arg(func: &str, v: &Value) -> mlua::Result<String> {
    match v {
        Value::Integer(n) => Ok(n.to_string()),
        Value::Number(n) if n.fract() == 0.0 && n.is_finite() => Ok(format!("{}", *n as i64)),
        Value::Number(n) => Ok(n.to_string()),
        other => name_arg(func, "id", other),
    }
}

fn status_arg(func: &str, v: &Value) -> mlua::Result<u16> {
    let n = match v {
        Value::Integer(n) => Some(*n),
        Value::Number(n) if n.fract() == 0.0 && n.is_finite() => Some(*n as i64),
        _ => None,
    };
    n.and_then(|n| u16::try_from(n).ok())
        .filter(|n| (200..=599).contains(n))
        .ok_or_else(|| {
            mlua::Error::runtime(format!(
                "{func}: status must be an integer HTTP status that answers a request \
                 (200–599; 1xx are interim responses), got {}",
                match v {
                    Value::Nil => "nothing".to_string(),
                    Value::Integer(n) => n.to_string(),
                    Value::Number(n) => n.to_string(),
                    other => other.type_name().to_string(),
                }
            ))
        })
}

/// What to say of an error whose value was not a message (`error({code = 1})`): Lua names such
/// a value by its type and address (`table: 0x5581…`), which differs from run to run and
/// would break the twin's same-requests-same-answers promise. `None` for any other message.
fn raised_value(head: &str) -> Option<String> {
    let (ty, addr) = head.split_once(": ")?;
    let hex = addr.strip_prefix("0x").unwrap_or(addr);
    if hex.is_empty() || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    let what = match ty {
        "table" | "function" | "userdata" => ty,
        "thread" => "coroutine",
        _ => return None,
    };
    Some(format!(
        "a {what} was raised as the error, not a message; raise a string: error(\"…\")"
    ))
}

/// The message of an mlua error without the Rust-side wrapping (callback tracebacks).
fn error_text(e: &mlua::Error) -> String {
    match e {
        mlua::Error::CallbackError { cause, .. } => error_text(cause),
        // The Lua traceback repeats what the first line says, in more noise than help for a
        // response body.
        mlua::Error::RuntimeError(m) => {
            let head = m
                .split_once("\nstack traceback:")
                .map_or(m.as_str(), |(head, _)| head);
            raised_value(head).unwrap_or_else(|| head.to_string())
        }
        mlua::Error::SyntaxError { message, .. } => message.clone(),
        mlua::Error::MemoryError(m) => format!("out of memory: {m}"),
        mlua::Error::WithContext { context, cause } => format!("{context}: {}", error_text(cause)),
        other => other.to_string(),
    }
}
