//! A small in-memory [`HandlerEnv`] and helpers to run a handler from source.
#![allow(dead_code)]

use std::collections::BTreeMap;

use serde_json::{Value, json};
use wraith_engine::{
    Handler, HandlerEnv, HandlerError, HandlerRequest, HandlerResponse, handler::query_matches,
};
use wraith_script::{LuaHandler, ScriptOptions};

/// An entity store with declared types, a deterministic clock (one second per reading, like
/// the engine's deterministic clock) and a splitmix64 RNG.
pub struct FakeEnv {
    pub declared: Vec<String>,
    pub store: BTreeMap<String, Vec<(String, Value)>>,
    pub counters: BTreeMap<String, i64>,
    pub clock_us: i64,
    pub rng: u64,
}

impl FakeEnv {
    pub fn new(types: &[&str]) -> FakeEnv {
        FakeEnv {
            declared: types.iter().map(|s| s.to_string()).collect(),
            store: BTreeMap::new(),
            counters: BTreeMap::new(),
            clock_us: 1_700_000_000_000_000,
            rng: 42,
        }
    }

    pub fn with(mut self, ty: &str, id: &str, v: Value) -> FakeEnv {
        self.store
            .entry(ty.to_string())
            .or_default()
            .push((id.to_string(), v));
        self
    }
}

impl HandlerEnv for FakeEnv {
    fn get(&self, ty: &str, id: &str) -> Option<Value> {
        self.store
            .get(ty)?
            .iter()
            .find(|(k, _)| k == id)
            .map(|(_, v)| v.clone())
    }

    fn put(&mut self, ty: &str, id: &str, record: &Value) -> Result<Value, HandlerError> {
        if !self.declared.iter().any(|d| d == ty) {
            return Err(HandlerError::new(format!(
                "state.put: entity type `{ty}` is not declared"
            )));
        }
        let mut base = self.get(ty, id).unwrap_or_else(|| json!({}));
        if let (Value::Object(b), Value::Object(r)) = (&mut base, record) {
            for (k, v) in r {
                if v.is_null() {
                    b.remove(k);
                } else {
                    b.insert(k.clone(), v.clone());
                }
            }
            b.entry("id").or_insert(json!(id));
        }
        let items = self.store.entry(ty.to_string()).or_default();
        match items.iter_mut().find(|(k, _)| k == id) {
            Some(slot) => slot.1 = base.clone(),
            None => items.push((id.to_string(), base.clone())),
        }
        Ok(base)
    }

    fn delete(&mut self, ty: &str, id: &str) -> Result<bool, HandlerError> {
        if !self.declared.iter().any(|d| d == ty) {
            return Err(HandlerError::new(format!(
                "state.delete: entity type `{ty}` is not declared"
            )));
        }
        let Some(items) = self.store.get_mut(ty) else {
            return Ok(false);
        };
        let before = items.len();
        items.retain(|(k, _)| k != id);
        Ok(items.len() != before)
    }

    fn list(&self, ty: &str) -> Vec<Value> {
        self.store
            .get(ty)
            .map(|items| items.iter().map(|(_, v)| v.clone()).collect())
            .unwrap_or_default()
    }

    fn query(&self, ty: &str, field: &str, value: &Value) -> Vec<Value> {
        self.list(ty)
            .into_iter()
            .filter(|r| query_matches(r, field, value))
            .collect()
    }

    fn counter(&mut self, name: &str) -> i64 {
        let c = self.counters.entry(name.to_string()).or_insert(0);
        *c += 1;
        *c
    }

    fn now_us(&mut self) -> i64 {
        let t = self.clock_us;
        self.clock_us += 1_000_000;
        t
    }

    fn advance_us(&mut self, micros: i64) -> Result<(), HandlerError> {
        let after = self.clock_us.saturating_add(micros);
        if after > wraith_engine::handler::LAST_CLOCK_SECS * 1_000_000 {
            return Err(HandlerError::new("clock.advance: past the last date"));
        }
        self.clock_us = after;
        Ok(())
    }

    fn random_u64(&mut self) -> u64 {
        self.rng = self.rng.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.rng;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// `<type>_<n>`, `n` counting per type from 1; an undeclared type fails as `put` does.
    fn new_id(&mut self, ty: &str) -> Result<Value, HandlerError> {
        if !self.declared.iter().any(|d| d == ty) {
            return Err(HandlerError::new(format!("undeclared type {ty}")));
        }
        let n = self.counter(&format!("\u{0}id:{ty}"));
        Ok(Value::String(format!("{ty}_{n}")))
    }
}

/// A request under construction.
pub struct Req {
    pub method: String,
    pub path: String,
    pub query: Vec<(String, String)>,
    pub headers: Vec<(String, String)>,
    pub params: Vec<(String, String)>,
    pub body: Vec<u8>,
    pub json: Option<Value>,
}

impl Req {
    pub fn get(path: &str) -> Req {
        Req {
            method: "GET".to_string(),
            path: path.to_string(),
            query: Vec::new(),
            headers: Vec::new(),
            params: Vec::new(),
            body: Vec::new(),
            json: None,
        }
    }

    pub fn post(path: &str, body: Value) -> Req {
        let mut r = Req::get(path);
        r.method = "POST".to_string();
        r.body = body.to_string().into_bytes();
        r.headers
            .push(("content-type".to_string(), "application/json".to_string()));
        r.json = Some(body);
        r
    }

    pub fn param(mut self, k: &str, v: &str) -> Req {
        self.params.push((k.to_string(), v.to_string()));
        self
    }

    pub fn query(mut self, k: &str, v: &str) -> Req {
        self.query.push((k.to_string(), v.to_string()));
        self
    }

    pub fn header(mut self, k: &str, v: &str) -> Req {
        self.headers.push((k.to_string(), v.to_string()));
        self
    }
}

pub fn handler(src: &str) -> LuaHandler {
    handler_with(src, &[], ScriptOptions::default())
}

pub fn handler_with(src: &str, libs: &[(&str, &str)], opts: ScriptOptions) -> LuaHandler {
    match LuaHandler::from_source("test_handler", src, libs, opts) {
        Ok(h) => h,
        Err(e) => panic!("handler does not compile: {e}"),
    }
}

pub fn call(h: &LuaHandler, req: &Req, env: &mut FakeEnv) -> Result<HandlerResponse, HandlerError> {
    let hr = HandlerRequest {
        handler: h.name(),
        route: "GET /test",
        method: &req.method,
        path: &req.path,
        query: &req.query,
        headers: &req.headers,
        params: &req.params,
        body: &req.body,
        json: req.json.as_ref(),
    };
    h.call(&hr, env)
}

/// Run `src` against `req` in `env`; panic on failure.
pub fn run(src: &str, req: &Req, env: &mut FakeEnv) -> HandlerResponse {
    match call(&handler(src), req, env) {
        Ok(r) => r,
        Err(e) => panic!("handler failed: {e}"),
    }
}

/// Run `src` and return its JSON body.
pub fn run_json(src: &str, req: &Req, env: &mut FakeEnv) -> Value {
    let r = run(src, req, env);
    match r.body {
        wraith_engine::HandlerBody::Json(v) => v,
        other => panic!("expected a JSON body, got {other:?}"),
    }
}

/// Run `src` and return its error message.
pub fn run_err(src: &str, req: &Req, env: &mut FakeEnv) -> String {
    match call(&handler(src), req, env) {
        Ok(r) => panic!("expected the handler to fail, got {r:?}"),
        Err(e) => e.message,
    }
}
