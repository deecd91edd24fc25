//! Determinism and isolation over HTTP, as properties of random request sequences: two
//! `wraith serve` processes of one twin, started with the same seed and clock, answer a
//! session's requests with the same bytes (status, every header but the wall-clock
//! `X-Wraith-Twin-Age`, body), even when one of them serves another session's requests
//! interleaved with them. Black-box: the real binary on 127.0.0.1 serving the bundled shop
//! twin (recorded CRUD routes, a fixture set, a Lua handler).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use std::sync::atomic::{AtomicUsize, Ordering};

use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use support::{Resp, Server};

const NAMES: [&str; 4] = [
    "Ada Lovelace",
    "Grace Brewster Hopper",
    "Nobody",
    "Radia Perlman",
];
const EMAILS: [&str; 4] = [
    "ada@example.com",
    "grace@example.com",
    "not-an-email",
    "radia@example.com",
];
/// Customers the recordings hold and the fixture set seeds.
const KNOWN_CUSTOMERS: [&str; 4] = [
    "cus_plbPwCH9lyjhzg",
    "cus_QGRbR1G7gzdI1a",
    "cus_FixtureMarg001",
    "cus_FixtureKath002",
];
const KNOWN_ORDERS: [&str; 2] = ["ord_uHLCzQsWkHhzr8", "ord_QBBCBOBxa7NpDY"];
const STATUSES: [&str; 3] = ["paid", "shipped", "lost"];

/// Which record a request names: one this session created (the k-th, modulo how many), one
/// the twin knows from its recordings or fixtures, or one nobody made.
#[derive(Debug, Clone)]
enum Ref {
    Created(usize),
    Known(usize),
    Unknown,
}

#[derive(Debug, Clone)]
enum Op {
    CreateCustomer {
        name: usize,
        email: Option<usize>,
    },
    ReadCustomer(Ref),
    ListCustomers(Option<u8>),
    UpdateCustomer(Ref, usize),
    DeleteCustomer(Ref),
    CreateOrder {
        customer: Ref,
        amount: u32,
        eur: bool,
    },
    ReadOrder(Ref),
    UpdateOrder(Ref, usize),
    DeleteOrder(Ref),
    ListOrders(Option<u8>),
    Summary(Ref),
    RouteMiss,
    MalformedBody,
}

fn a_ref() -> impl Strategy<Value = Ref> {
    prop_oneof![
        3 => (0usize..4).prop_map(Ref::Created),
        2 => (0usize..4).prop_map(Ref::Known),
        1 => Just(Ref::Unknown),
    ]
}

fn an_op() -> impl Strategy<Value = Op> {
    let limit = proptest::option::of(0u8..4);
    prop_oneof![
        4 => (0usize..4, proptest::option::of(0usize..4))
            .prop_map(|(name, email)| Op::CreateCustomer { name, email }),
        2 => a_ref().prop_map(Op::ReadCustomer),
        1 => limit.clone().prop_map(Op::ListCustomers),
        1 => (a_ref(), 0usize..4).prop_map(|(r, n)| Op::UpdateCustomer(r, n)),
        1 => a_ref().prop_map(Op::DeleteCustomer),
        3 => (a_ref(), 1u32..10_000, any::<bool>())
            .prop_map(|(customer, amount, eur)| Op::CreateOrder { customer, amount, eur }),
        2 => a_ref().prop_map(Op::ReadOrder),
        1 => (a_ref(), 0usize..3).prop_map(|(r, s)| Op::UpdateOrder(r, s)),
        1 => a_ref().prop_map(Op::DeleteOrder),
        1 => limit.prop_map(Op::ListOrders),
        1 => a_ref().prop_map(Op::Summary),
        1 => Just(Op::RouteMiss),
        1 => Just(Op::MalformedBody),
    ]
}

/// What one session created so far, to resolve a [`Ref`].
#[derive(Default)]
struct Made {
    customers: Vec<String>,
    orders: Vec<String>,
}

fn resolve(r: &Ref, made: &[String], known: &[&str], unknown: &str) -> String {
    match r {
        Ref::Created(k) if !made.is_empty() => made[k % made.len()].clone(),
        Ref::Created(k) | Ref::Known(k) => known[k % known.len()].to_string(),
        Ref::Unknown => unknown.to_string(),
    }
}

/// One request: method, path and body (JSON text, or not JSON at all).
fn request_of(op: &Op, made: &Made) -> (&'static str, String, Option<String>) {
    let customer = |r: &Ref| resolve(r, &made.customers, &KNOWN_CUSTOMERS, "cus_NoSuchCustomer1");
    let order = |r: &Ref| resolve(r, &made.orders, &KNOWN_ORDERS, "ord_NoSuchOrder0001");
    let limit = |l: &Option<u8>| l.map_or(String::new(), |l| format!("?limit={l}"));
    match op {
        Op::CreateCustomer { name, email } => {
            let mut body = serde_json::json!({ "name": NAMES[*name] });
            if let Some(e) = email {
                body["email"] = EMAILS[*e].into();
            }
            ("POST", "/customers".into(), Some(body.to_string()))
        }
        Op::ReadCustomer(r) => ("GET", format!("/customers/{}", customer(r)), None),
        Op::ListCustomers(l) => ("GET", format!("/customers{}", limit(l)), None),
        Op::UpdateCustomer(r, n) => (
            "PATCH",
            format!("/customers/{}", customer(r)),
            Some(serde_json::json!({ "name": NAMES[*n] }).to_string()),
        ),
        Op::DeleteCustomer(r) => ("DELETE", format!("/customers/{}", customer(r)), None),
        Op::CreateOrder {
            customer: c,
            amount,
            eur,
        } => {
            let body = serde_json::json!({
                "customer_id": customer(c),
                "amount": amount,
                "currency": if *eur { "eur" } else { "usd" },
            });
            ("POST", "/orders".into(), Some(body.to_string()))
        }
        Op::ReadOrder(r) => ("GET", format!("/orders/{}", order(r)), None),
        Op::UpdateOrder(r, s) => (
            "PATCH",
            format!("/orders/{}", order(r)),
            Some(serde_json::json!({ "status": STATUSES[*s] }).to_string()),
        ),
        Op::DeleteOrder(r) => ("DELETE", format!("/orders/{}", order(r)), None),
        Op::ListOrders(l) => ("GET", format!("/orders{}", limit(l)), None),
        Op::Summary(r) => ("GET", format!("/customers/{}/summary", customer(r)), None),
        Op::RouteMiss => ("GET", "/widgets/wid_1".into(), None),
        Op::MalformedBody => ("POST", "/customers".into(), Some("{\"name\": ".into())),
    }
}

async fn send(server: &Server, session: &str, op: &Op, made: &mut Made) -> Resp {
    let (method, path, body) = request_of(op, made);
    let method = reqwest::Method::from_bytes(method.as_bytes()).unwrap();
    let mut rb = server
        .client
        .request(method, format!("{}{path}", server.url))
        .header("X-Wraith-Session", session);
    if let Some(b) = body {
        rb = rb.header("content-type", "application/json").body(b);
    }
    let r = support::Resp::read(rb.send().await.unwrap()).await;
    if (200..300).contains(&r.status) {
        let id = serde_json::from_slice::<serde_json::Value>(&r.body)
            .ok()
            .and_then(|v| v["id"].as_str().map(str::to_string));
        match (op, id) {
            (Op::CreateCustomer { .. }, Some(id)) => made.customers.push(id),
            (Op::CreateOrder { .. }, Some(id)) => made.orders.push(id),
            _ => {}
        }
    }
    r
}

/// A response as the property compares it: status, headers (the wall-clock twin age left
/// out: the contract stamps it when the server starts), body.
fn comparable(r: &Resp) -> (u16, Vec<(String, Vec<String>)>, String) {
    let headers = r
        .headers
        .iter()
        .filter(|(k, _)| k.as_str() != "x-wraith-twin-age")
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    (
        r.status,
        headers,
        String::from_utf8_lossy(&r.body).into_owned(),
    )
}

#[test]
fn same_seed_and_clock_answer_a_session_byte_for_byte_whatever_other_sessions_send() {
    let t = support::example_shop_twin();
    let args = [
        "--seed",
        "42",
        "--clock",
        "deterministic",
        "--clock-epoch",
        "1700000000",
    ];
    // One after the other: the first synthesizes the model the second then reads.
    let alone = t.serve(&args);
    let shared = t.serve(&args);
    let rt = tokio::runtime::Runtime::new().unwrap();
    let case = AtomicUsize::new(0);
    let mut runner = TestRunner::new(Config {
        cases: 24,
        failure_persistence: None,
        ..Config::default()
    });
    let strategy = proptest::collection::vec((any::<bool>(), an_op()), 1..40);
    let result = runner.run(&strategy, |ops| {
        let n = case.fetch_add(1, Ordering::SeqCst);
        let (mine, other) = (format!("agent-{n}"), format!("other-{n}"));
        rt.block_on(async {
            let (mut made_alone, mut made_shared, mut made_other) =
                (Made::default(), Made::default(), Made::default());
            for (i, (is_mine, op)) in ops.iter().enumerate() {
                if !is_mine {
                    send(&shared, &other, op, &mut made_other).await;
                    continue;
                }
                let a = send(&alone, &mine, op, &mut made_alone).await;
                let b = send(&shared, &mine, op, &mut made_shared).await;
                prop_assert_eq!(
                    comparable(&a),
                    comparable(&b),
                    "request {} ({:?}) answered differently",
                    i,
                    op
                );
                prop_assert!(a.header("x-wraith-twin-age").is_some());
            }
            // Leave no namespaces behind: every case gets fresh session names.
            for (server, session) in [(&alone, &mine), (&shared, &mine), (&shared, &other)] {
                let r = server
                    .client
                    .delete(format!("{}/__wraith/session/{session}", server.url))
                    .send()
                    .await
                    .unwrap();
                prop_assert!(r.status().is_success() || r.status().as_u16() == 404);
            }
            Ok::<(), TestCaseError>(())
        })
    });
    if let Err(e) = result {
        panic!("{e}");
    }
}
