//! `shop-api`: a small, real HTTP API used as the upstream of Wraith's example twin.
//!
//! Customers and orders kept in memory. Everything a recording could capture is deterministic:
//! ids and `created` timestamps come from one counter, so driving the same request sequence
//! against a fresh process gives byte-identical responses (apart from the `date` header that
//! hyper adds). It is an example, not part of Wraith: no persistence, no auth, one file.
//!
//! ```text
//! shop-api --port 18080 [--ready-file PATH]
//! ```
//!
//! Routes (JSON in, JSON out):
//! - `POST /customers`, `GET /customers?limit=&offset=`, `GET|PATCH|DELETE /customers/{id}`
//! - `POST /orders`, `GET /orders?limit=&offset=&customer_id=`, `GET|PATCH|DELETE /orders/{id}`
//!
//! Errors are `{"error":{"type":...,"message":...}}` with `invalid_request_error` (400),
//! `not_found` (404) or `method_not_allowed` (405).

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, PoisonError};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::header::{CONTENT_TYPE, HeaderValue};
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::{TokioExecutor, TokioIo};
use serde_json::{Map, Value, json};

/// First `created` value; every create advances the clock by one second.
const EPOCH_BASE: u64 = 1_767_225_600; // 2026-01-01T00:00:00Z
const DEFAULT_LIMIT: usize = 10;
const MAX_LIMIT: usize = 100;
const BASE62: &[u8; 62] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/// The whole in-memory shop. Records keep insertion order, which is also list order.
#[derive(Default)]
struct Shop {
    /// Counter behind ids and timestamps.
    seq: u64,
    customers: Vec<Map<String, Value>>,
    orders: Vec<Map<String, Value>>,
}

/// A response in the making: status + JSON body.
type Reply = (StatusCode, Value);

fn error(status: StatusCode, kind: &str, message: impl Into<String>) -> Reply {
    (
        status,
        json!({"error": {"type": kind, "message": message.into()}}),
    )
}

fn invalid(message: impl Into<String>) -> Reply {
    error(
        StatusCode::BAD_REQUEST,
        "invalid_request_error",
        message.into(),
    )
}

fn not_found(what: &str, id: &str) -> Reply {
    error(
        StatusCode::NOT_FOUND,
        "not_found",
        format!("No such {what}: '{id}'"),
    )
}

/// splitmix64: a tiny, well-mixed step so consecutive ids do not look sequential.
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// `<prefix>_` + 14 base62 characters derived from the counter.
fn make_id(prefix: &str, n: u64) -> String {
    let mut state = mix(n);
    let mut out = String::with_capacity(prefix.len() + 15);
    out.push_str(prefix);
    out.push('_');
    for i in 0..14 {
        if i == 7 {
            state = mix(state ^ n);
        }
        out.push(char::from(BASE62[(state % 62) as usize]));
        state /= 62;
    }
    out
}

fn valid_email(s: &str) -> bool {
    let mut parts = s.split('@');
    match (parts.next(), parts.next(), parts.next()) {
        (Some(local), Some(domain), None) => {
            !local.is_empty()
                && !s.contains(char::is_whitespace)
                && domain.contains('.')
                && !domain.starts_with('.')
                && !domain.ends_with('.')
        }
        _ => false,
    }
}

/// `limit`/`offset`/filters from a raw query string.
struct ListQuery {
    limit: usize,
    offset: usize,
    customer_id: Option<String>,
}

fn parse_list_query(query: &str) -> Result<ListQuery, Reply> {
    let mut q = ListQuery {
        limit: DEFAULT_LIMIT,
        offset: 0,
        customer_id: None,
    };
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        match key {
            "limit" => match value.parse::<usize>() {
                Ok(n) if (1..=MAX_LIMIT).contains(&n) => q.limit = n,
                _ => {
                    return Err(invalid(format!(
                        "Invalid limit '{value}': must be an integer between 1 and {MAX_LIMIT}"
                    )));
                }
            },
            "offset" => match value.parse::<usize>() {
                Ok(n) => q.offset = n,
                _ => {
                    return Err(invalid(format!(
                        "Invalid offset '{value}': must be a non-negative integer"
                    )));
                }
            },
            "customer_id" => q.customer_id = Some(value.to_string()),
            _ => {}
        }
    }
    Ok(q)
}

fn list(records: &[Map<String, Value>], q: &ListQuery) -> Reply {
    let matching: Vec<&Map<String, Value>> = records
        .iter()
        .filter(|r| match &q.customer_id {
            Some(c) => r.get("customer_id").and_then(Value::as_str) == Some(c.as_str()),
            None => true,
        })
        .collect();
    let total = matching.len();
    let page: Vec<Value> = matching
        .iter()
        .skip(q.offset)
        .take(q.limit)
        .map(|r| Value::Object((*r).clone()))
        .collect();
    let has_more = q.offset.saturating_add(page.len()) < total;
    (
        StatusCode::OK,
        json!({"data": page, "has_more": has_more, "total": total}),
    )
}

/// Parse a JSON object body, or explain why it is not one.
fn object_body(body: &[u8]) -> Result<Map<String, Value>, Reply> {
    if body.is_empty() {
        return Err(invalid("Request body must be a JSON object"));
    }
    match serde_json::from_slice::<Value>(body) {
        Ok(Value::Object(m)) => Ok(m),
        Ok(_) => Err(invalid("Request body must be a JSON object")),
        Err(e) => Err(invalid(format!("Request body is not valid JSON: {e}"))),
    }
}

fn optional_string(body: &Map<String, Value>, field: &str) -> Result<Option<String>, Reply> {
    match body.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(invalid(format!("Invalid {field}: must be a string"))),
    }
}

fn checked_email(body: &Map<String, Value>) -> Result<Option<String>, Reply> {
    match optional_string(body, "email")? {
        Some(e) if valid_email(&e) => Ok(Some(e)),
        Some(e) => Err(invalid(format!("Invalid email: '{e}'"))),
        None => Ok(None),
    }
}

fn checked_amount(body: &Map<String, Value>) -> Result<Option<u64>, Reply> {
    match body.get("amount") {
        None | Some(Value::Null) => Ok(None),
        Some(v) => match v.as_u64() {
            Some(n) if n > 0 => Ok(Some(n)),
            _ => Err(invalid(
                "Invalid amount: must be a positive integer (cents)",
            )),
        },
    }
}

const ORDER_STATUSES: [&str; 4] = ["pending", "paid", "shipped", "cancelled"];

impl Shop {
    fn next(&mut self) -> u64 {
        self.seq += 1;
        self.seq
    }

    fn find(records: &[Map<String, Value>], id: &str) -> Option<usize> {
        records
            .iter()
            .position(|r| r.get("id").and_then(Value::as_str) == Some(id))
    }

    fn create_customer(&mut self, body: &[u8]) -> Reply {
        let body = match object_body(body) {
            Ok(b) => b,
            Err(r) => return r,
        };
        let email = match checked_email(&body) {
            Ok(Some(e)) => e,
            Ok(None) => return invalid("Missing required param: email"),
            Err(r) => return r,
        };
        let name = match optional_string(&body, "name") {
            Ok(n) => n,
            Err(r) => return r,
        };
        let n = self.next();
        let mut c = Map::new();
        c.insert("id".into(), json!(make_id("cus", n)));
        c.insert("object".into(), json!("customer"));
        c.insert("email".into(), json!(email));
        c.insert("name".into(), json!(name));
        c.insert("created".into(), json!(EPOCH_BASE + n));
        self.customers.push(c.clone());
        (StatusCode::CREATED, Value::Object(c))
    }

    fn update_customer(&mut self, id: &str, body: &[u8]) -> Reply {
        let Some(i) = Self::find(&self.customers, id) else {
            return not_found("customer", id);
        };
        let body = match object_body(body) {
            Ok(b) => b,
            Err(r) => return r,
        };
        let (email, name) = match (checked_email(&body), optional_string(&body, "name")) {
            (Ok(e), Ok(n)) => (e, n),
            (Err(r), _) | (_, Err(r)) => return r,
        };
        let c = &mut self.customers[i];
        if let Some(e) = email {
            c.insert("email".into(), json!(e));
        }
        if let Some(n) = name {
            c.insert("name".into(), json!(n));
        }
        (StatusCode::OK, Value::Object(c.clone()))
    }

    fn create_order(&mut self, body: &[u8]) -> Reply {
        let body = match object_body(body) {
            Ok(b) => b,
            Err(r) => return r,
        };
        let customer_id = match optional_string(&body, "customer_id") {
            Ok(Some(c)) => c,
            Ok(None) => return invalid("Missing required param: customer_id"),
            Err(r) => return r,
        };
        if Self::find(&self.customers, &customer_id).is_none() {
            return invalid(format!("No such customer: '{customer_id}'"));
        }
        let amount = match checked_amount(&body) {
            Ok(Some(a)) => a,
            Ok(None) => return invalid("Missing required param: amount"),
            Err(r) => return r,
        };
        let currency = match optional_string(&body, "currency") {
            Ok(c) => c.unwrap_or_else(|| "usd".to_string()),
            Err(r) => return r,
        };
        let n = self.next();
        let mut o = Map::new();
        o.insert("id".into(), json!(make_id("ord", n)));
        o.insert("object".into(), json!("order"));
        o.insert("customer_id".into(), json!(customer_id));
        o.insert("amount".into(), json!(amount));
        o.insert("currency".into(), json!(currency));
        o.insert("status".into(), json!("pending"));
        o.insert("created".into(), json!(EPOCH_BASE + n));
        self.orders.push(o.clone());
        (StatusCode::CREATED, Value::Object(o))
    }

    fn update_order(&mut self, id: &str, body: &[u8]) -> Reply {
        let Some(i) = Self::find(&self.orders, id) else {
            return not_found("order", id);
        };
        let body = match object_body(body) {
            Ok(b) => b,
            Err(r) => return r,
        };
        let status = match optional_string(&body, "status") {
            Ok(Some(s)) if ORDER_STATUSES.contains(&s.as_str()) => Some(s),
            Ok(Some(s)) => {
                return invalid(format!(
                    "Invalid status '{s}': must be one of {}",
                    ORDER_STATUSES.join(", ")
                ));
            }
            Ok(None) => None,
            Err(r) => return r,
        };
        let amount = match checked_amount(&body) {
            Ok(a) => a,
            Err(r) => return r,
        };
        let o = &mut self.orders[i];
        if let Some(s) = status {
            o.insert("status".into(), json!(s));
        }
        if let Some(a) = amount {
            o.insert("amount".into(), json!(a));
        }
        (StatusCode::OK, Value::Object(o.clone()))
    }

    fn delete(records: &mut Vec<Map<String, Value>>, what: &str, id: &str) -> Reply {
        match Self::find(records, id) {
            Some(i) => {
                records.remove(i);
                (StatusCode::OK, json!({"id": id, "deleted": true}))
            }
            None => not_found(what, id),
        }
    }

    /// Route one request. Pure apart from the shop's own state.
    fn handle(&mut self, method: &Method, path: &str, query: &str, body: &[u8]) -> Reply {
        let segments: Vec<&str> = path.trim_matches('/').split('/').collect();
        match (segments.as_slice(), method) {
            (["customers"], &Method::POST) => self.create_customer(body),
            (["customers"], &Method::GET) => match parse_list_query(query) {
                Ok(q) => list(&self.customers, &q),
                Err(r) => r,
            },
            (["customers", id], &Method::GET) => match Self::find(&self.customers, id) {
                Some(i) => (StatusCode::OK, Value::Object(self.customers[i].clone())),
                None => not_found("customer", id),
            },
            (["customers", id], &Method::PATCH) => self.update_customer(id, body),
            (["customers", id], &Method::DELETE) => {
                Self::delete(&mut self.customers, "customer", id)
            }
            (["orders"], &Method::POST) => self.create_order(body),
            (["orders"], &Method::GET) => match parse_list_query(query) {
                Ok(q) => list(&self.orders, &q),
                Err(r) => r,
            },
            (["orders", id], &Method::GET) => match Self::find(&self.orders, id) {
                Some(i) => (StatusCode::OK, Value::Object(self.orders[i].clone())),
                None => not_found("order", id),
            },
            (["orders", id], &Method::PATCH) => self.update_order(id, body),
            (["orders", id], &Method::DELETE) => Self::delete(&mut self.orders, "order", id),
            (["customers"] | ["orders"] | ["customers", _] | ["orders", _], _) => error(
                StatusCode::METHOD_NOT_ALLOWED,
                "method_not_allowed",
                format!("{method} is not allowed on {path}"),
            ),
            _ => error(
                StatusCode::NOT_FOUND,
                "not_found",
                format!("Unrecognized request URL ({method} {path})"),
            ),
        }
    }
}

async fn serve(
    shop: Arc<Mutex<Shop>>,
    req: Request<Incoming>,
) -> Result<Response<Full<Bytes>>, Infallible> {
    let (parts, body) = req.into_parts();
    let (status, value) = match body.collect().await {
        Ok(collected) => {
            let bytes = collected.to_bytes();
            let query = parts.uri.query().unwrap_or("");
            // The lock is never held across an await: handle() is synchronous.
            let mut guard = shop.lock().unwrap_or_else(PoisonError::into_inner);
            guard.handle(&parts.method, parts.uri.path(), query, &bytes)
        }
        Err(e) => invalid(format!("Could not read request body: {e}")),
    };
    let mut text = value.to_string();
    text.push('\n');
    let mut resp = Response::new(Full::new(Bytes::from(text)));
    *resp.status_mut() = status;
    resp.headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    Ok(resp)
}

struct Args {
    port: u16,
    ready_file: Option<std::path::PathBuf>,
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        port: 18080,
        ready_file: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--port" => {
                let v = it.next().ok_or("--port needs a value")?;
                args.port = v
                    .parse()
                    .map_err(|_| format!("--port: '{v}' is not a port number"))?;
            }
            "--ready-file" => {
                let v = it.next().ok_or("--ready-file needs a path")?;
                args.ready_file = Some(v.into());
            }
            "-h" | "--help" => {
                return Err(
                    "usage: shop-api [--port N (0 = ephemeral)] [--ready-file PATH]".into(),
                );
            }
            other => return Err(format!("unknown argument '{other}' (try --help)")),
        }
    }
    Ok(args)
}

/// Write `url` to `path` via a temp file + rename so a poller never reads half a line.
fn write_ready_file(path: &std::path::Path, url: &str) -> std::io::Result<()> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    std::fs::write(&tmp, format!("{url}\n"))?;
    std::fs::rename(&tmp, path)
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> std::process::ExitCode {
    let args = match parse_args() {
        Ok(a) => a,
        Err(msg) => {
            eprintln!("shop-api: {msg}");
            return std::process::ExitCode::from(1);
        }
    };
    let addr = SocketAddr::from(([127, 0, 0, 1], args.port));
    let listener = match tokio::net::TcpListener::bind(addr).await {
        Ok(l) => l,
        Err(e) => {
            eprintln!("shop-api: cannot listen on {addr}: {e}");
            return std::process::ExitCode::from(4);
        }
    };
    let url = match listener.local_addr() {
        Ok(a) => format!("http://{a}"),
        Err(e) => {
            eprintln!("shop-api: cannot read the bound address: {e}");
            return std::process::ExitCode::from(4);
        }
    };
    if let Some(path) = &args.ready_file
        && let Err(e) = write_ready_file(path, &url)
    {
        eprintln!("shop-api: cannot write {}: {e}", path.display());
        return std::process::ExitCode::from(4);
    }
    eprintln!("shop-api listening on {url}");

    let shop = Arc::new(Mutex::new(Shop::default()));
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let Ok((stream, _)) = accepted else { continue };
                let shop = shop.clone();
                tokio::spawn(async move {
                    let service = hyper::service::service_fn(move |req| serve(shop.clone(), req));
                    let builder = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new());
                    if let Err(e) = builder.serve_connection(TokioIo::new(stream), service).await {
                        eprintln!("shop-api: connection error: {e}");
                    }
                });
            }
            _ = tokio::signal::ctrl_c() => break,
        }
    }
    std::process::ExitCode::SUCCESS
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(shop: &mut Shop, method: Method, path: &str, body: Value) -> Reply {
        let (path, query) = path.split_once('?').unwrap_or((path, ""));
        let bytes = if body.is_null() {
            Vec::new()
        } else {
            body.to_string().into_bytes()
        };
        shop.handle(&method, path, query, &bytes)
    }

    #[test]
    fn ids_are_prefixed_base62_of_fixed_length_and_distinct() {
        let a = make_id("cus", 1);
        let b = make_id("cus", 2);
        assert_eq!(a.len(), 4 + 14);
        assert!(a.starts_with("cus_"));
        assert!(a[4..].bytes().all(|c| c.is_ascii_alphanumeric()));
        assert_ne!(a, b);
        assert_eq!(a, make_id("cus", 1));
    }

    #[test]
    fn customer_lifecycle_create_read_update_delete_then_404() {
        let mut shop = Shop::default();
        let (s, c) = call(
            &mut shop,
            Method::POST,
            "/customers",
            json!({"email": "ada@example.com", "name": "Ada"}),
        );
        assert_eq!(s, StatusCode::CREATED);
        let id = c["id"].as_str().unwrap_or_default().to_string();
        assert_eq!(c["created"], json!(EPOCH_BASE + 1));
        let path = format!("/customers/{id}");
        assert_eq!(
            call(&mut shop, Method::GET, &path, Value::Null),
            (StatusCode::OK, c.clone())
        );
        let (s, u) = call(&mut shop, Method::PATCH, &path, json!({"name": "Ada L."}));
        assert_eq!((s, &u["name"]), (StatusCode::OK, &json!("Ada L.")));
        let (s, d) = call(&mut shop, Method::DELETE, &path, Value::Null);
        assert_eq!((s, d), (StatusCode::OK, json!({"id": id, "deleted": true})));
        let (s, e) = call(&mut shop, Method::DELETE, &path, Value::Null);
        assert_eq!(s, StatusCode::NOT_FOUND);
        assert_eq!(e["error"]["type"], json!("not_found"));
    }

    #[test]
    fn create_customer_without_valid_email_is_invalid_request() {
        let mut shop = Shop::default();
        for body in [json!({"name": "x"}), json!({"email": "not-an-email"})] {
            let (s, e) = call(&mut shop, Method::POST, "/customers", body);
            assert_eq!(s, StatusCode::BAD_REQUEST);
            assert_eq!(e["error"]["type"], json!("invalid_request_error"));
        }
        assert!(shop.customers.is_empty());
    }

    #[test]
    fn list_pages_with_limit_offset_and_filters_orders_by_customer() {
        let mut shop = Shop::default();
        let mut ids = Vec::new();
        for i in 0..3 {
            let (_, c) = call(
                &mut shop,
                Method::POST,
                "/customers",
                json!({"email": format!("c{i}@example.com")}),
            );
            ids.push(c["id"].as_str().unwrap_or_default().to_string());
        }
        let (_, page) = call(
            &mut shop,
            Method::GET,
            "/customers?limit=2&offset=1",
            Value::Null,
        );
        assert_eq!(page["total"], json!(3));
        assert_eq!(page["has_more"], json!(false));
        assert_eq!(page["data"][0]["id"], json!(ids[1]));
        let (_, page) = call(&mut shop, Method::GET, "/customers?limit=2", Value::Null);
        assert_eq!(page["has_more"], json!(true));

        for cid in [&ids[0], &ids[0], &ids[2]] {
            let (s, _) = call(
                &mut shop,
                Method::POST,
                "/orders",
                json!({"customer_id": cid, "amount": 1200}),
            );
            assert_eq!(s, StatusCode::CREATED);
        }
        let (_, page) = call(
            &mut shop,
            Method::GET,
            &format!("/orders?customer_id={}", ids[0]),
            Value::Null,
        );
        assert_eq!(page["total"], json!(2));
        let (s, _) = call(&mut shop, Method::GET, "/orders?limit=0", Value::Null);
        assert_eq!(s, StatusCode::BAD_REQUEST);
    }
}
