//! A client that stops half way through a request, or never starts one, does not hold its
//! connection for ever: `[serve.limits] request_idle_timeout_ms` bounds the wait for its first
//! bytes (the connection is closed), for the rest of its headers and
//! for each next part of its body (408 `request-timeout`), while a body that keeps arriving,
//! however slowly, is read whole. The bodies held at once are bounded together by
//! `[serve.limits] max_pending_body_mb` (503 `server-busy` past it). Black-box: raw TCP to the
//! real binary on 127.0.0.1.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use support::Server;

fn connect(server: &Server) -> TcpStream {
    let addr = server.url.trim_start_matches("http://");
    let s = TcpStream::connect(addr).unwrap();
    // A bound on the test, not a figure it measures: far above the 300 ms idle timeout.
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    s
}

/// Everything the server sends until it closes the connection or answers once.
fn read_answer(s: &mut TcpStream) -> String {
    let mut out = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        match s.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                out.extend_from_slice(&buf[..n]);
                let text = String::from_utf8_lossy(&out);
                if let Some(head_end) = text.find("\r\n\r\n") {
                    let length = text[..head_end]
                        .lines()
                        .find_map(|l| {
                            l.to_ascii_lowercase()
                                .strip_prefix("content-length:")
                                .map(|v| v.trim().parse::<usize>().unwrap())
                        })
                        .unwrap_or(0);
                    if out.len() >= head_end + 4 + length {
                        break;
                    }
                }
            }
            Err(e) => panic!("the server neither answered nor closed the connection: {e}"),
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn slow_twin() -> support::Twin {
    let t = support::example_shop_twin();
    t.set_toml("serve.limits", "request_idle_timeout_ms", "300");
    t
}

#[test]
fn a_body_that_stops_arriving_is_answered_408_request_timeout() {
    let t = slow_twin();
    let server = t.serve(&[]);
    let mut s = connect(&server);
    s.write_all(
        b"POST /customers HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n\
          Content-Length: 100\r\n\r\n{\"n",
    )
    .unwrap();
    let answer = read_answer(&mut s);
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(answer.contains("\"request-timeout\""), "{answer}");
    assert!(answer.contains("request_idle_timeout_ms"), "{answer}");
}

#[test]
fn half_sent_headers_are_given_up_on() {
    let t = slow_twin();
    let server = t.serve(&[]);
    let mut s = connect(&server);
    s.write_all(b"GET /customers HTTP/1.1\r\nHost: x\r\n")
        .unwrap();
    let answer = read_answer(&mut s);
    assert!(
        answer.is_empty() || answer.starts_with("HTTP/1.1 408"),
        "{answer}"
    );
}

/// hyper's protocol detection reads the whole HTTP/2 preface with no timer of its own: a client
/// that stops inside it is closed like one that sends nothing.
#[test]
fn a_half_sent_http2_preface_is_given_up_on() {
    let t = slow_twin();
    let server = t.serve(&[]);
    let mut s = connect(&server);
    s.write_all(b"PRI * HTTP/2").unwrap();
    let answer = read_answer(&mut s);
    assert!(answer.is_empty(), "{answer}");
}

/// HTTP/2 has no header timer: a peer that opened the connection and then neither sends nor
/// answers the twin's PING is dropped (after about twice the idle timeout), while a live
/// client, which answers it, keeps its connection across many idle timeouts.
#[tokio::test]
async fn an_http2_peer_that_answers_no_ping_is_dropped_and_a_live_client_stays() {
    let t = slow_twin();
    let server = t.serve(&[]);
    let mut s = connect(&server);
    // The preface and an empty SETTINGS frame, then nothing: not even the SETTINGS ack.
    s.write_all(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\0\0\0\x04\0\0\0\0\0")
        .unwrap();
    let mut buf = [0u8; 4096];
    loop {
        match s.read(&mut buf) {
            Ok(0) => break,
            Ok(_) => {}
            Err(e) => {
                assert!(
                    !matches!(
                        e.kind(),
                        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                    ),
                    "the silent HTTP/2 peer was kept: {e}"
                );
                break;
            }
        }
    }

    // One connection, kept by hand: a pool would reconnect without saying so.
    let addr = server.url.trim_start_matches("http://").to_string();
    let tcp = tokio::net::TcpStream::connect(&addr).await.unwrap();
    let (mut send, conn) = hyper::client::conn::http2::handshake(
        hyper_util::rt::TokioExecutor::new(),
        hyper_util::rt::TokioIo::new(tcp),
    )
    .await
    .unwrap();
    tokio::spawn(conn);
    let health = || {
        hyper::Request::get(format!("http://{addr}/__wraith/health"))
            .body(http_body_util::Empty::<bytes::Bytes>::new())
            .unwrap()
    };
    assert_eq!(send.send_request(health()).await.unwrap().status(), 200);
    // Five idle timeouts: the client answers the twin's pings, so the connection stays.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(send.send_request(health()).await.unwrap().status(), 200);
}

#[test]
fn a_connection_that_sends_nothing_is_closed() {
    let t = slow_twin();
    let server = t.serve(&[]);
    let mut s = connect(&server);
    let mut buf = [0u8; 16];
    // Closed (0 bytes, or a reset), not the 20 s read timeout of `connect`.
    match s.read(&mut buf) {
        Ok(n) => assert_eq!(n, 0, "nothing to answer, so nothing is sent"),
        Err(e) => assert!(
            !matches!(
                e.kind(),
                std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
            ),
            "the connection was left open: {e}"
        ),
    }
}

#[test]
fn a_body_that_keeps_arriving_slowly_is_read_whole() {
    let t = slow_twin();
    let server = t.serve(&[]);
    let body = br#"{"name": "slow", "email": "slow@example.com"}"#;
    let mut s = connect(&server);
    write!(
        s,
        "POST /customers HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\n\r\n",
        body.len()
    )
    .unwrap();
    // Ten pieces 100 ms apart: about a second in all, each within the 300 ms idle timeout.
    for piece in body.chunks(body.len().div_ceil(10)) {
        s.write_all(piece).unwrap();
        s.flush().unwrap();
        std::thread::sleep(Duration::from_millis(100));
    }
    let answer = read_answer(&mut s);
    assert!(answer.starts_with("HTTP/1.1 201"), "{answer}");
    assert!(answer.contains("\"slow@example.com\""), "{answer}");
}

/// A client that asks for a large answer and never reads it does not keep the connection,
/// and the answer in memory, for ever: once the twin has written nothing for the idle
/// timeout, it gives the answer up and closes the connection. Read afterwards, the answer
/// ends short of its `Content-Length`.
#[tokio::test]
async fn an_answer_the_client_never_reads_is_given_up_on() {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

    let t = slow_twin();
    let server = t.serve(&[]);
    // 8 MB: more than the two sockets' buffers hold, so most of it waits on the reader.
    let name = "n".repeat(8 << 20);
    let created = server
        .post(
            "/customers",
            Some("big"),
            serde_json::json!({"name": name, "email": "big@example.com"}),
        )
        .await;
    created.assert_status(201);
    let id = created.json()["id"].as_str().unwrap().to_string();

    let addr = server.url.trim_start_matches("http://").parse().unwrap();
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.set_recv_buffer_size(4096).unwrap();
    let mut s = socket.connect(addr).await.unwrap();
    let request =
        format!("GET /customers/{id} HTTP/1.1\r\nHost: x\r\nX-Wraith-Session: big\r\n\r\n");
    s.write_all(request.as_bytes()).await.unwrap();
    // Nothing read for several idle timeouts (300 ms).
    tokio::time::sleep(Duration::from_secs(2)).await;
    let mut got = Vec::new();
    // A bound on the test: the connection must end on its own, long before this.
    let ended = tokio::time::timeout(Duration::from_secs(20), s.read_to_end(&mut got)).await;
    assert!(ended.is_ok(), "the stalled connection was left open");
    let text = String::from_utf8_lossy(&got[..got.len().min(4096)]).into_owned();
    let head_end = text.find("\r\n\r\n").expect("the answer's head was sent");
    let length: usize = text[..head_end]
        .lines()
        .find_map(|l| {
            l.to_ascii_lowercase()
                .strip_prefix("content-length:")
                .map(|v| v.trim().parse().unwrap())
        })
        .unwrap();
    assert!(length > 8 << 20, "{}", &text[..head_end]);
    assert!(
        got.len() < head_end + 4 + length,
        "the whole answer was kept for a client that read none of it for 2 s"
    );
}

const MIB: usize = 1024 * 1024;

/// The example twin with the smallest budget of bodies held at once: 16 MiB, one whole body.
fn budget_twin() -> support::Twin {
    let t = support::example_shop_twin();
    t.set_toml("serve.limits", "max_pending_body_mb", "16");
    t
}

/// A connection that has sent the head of a `len`-byte create and two bytes of its body,
/// and then waits: the twin holds the body's declared length. The head asks
/// `Expect: 100-continue`, which the twin answers once it reads the body, after taking its
/// share: so the share is taken when this returns, whatever other connections do.
fn held_body(server: &Server, len: usize) -> TcpStream {
    let mut s = asking_to_send(server, len, "");
    let interim = read_answer(&mut s);
    assert!(interim.starts_with("HTTP/1.1 100"), "{interim}");
    s.write_all(b"{\"").unwrap();
    s.flush().unwrap();
    s
}

/// A connection that has sent the head of a `len`-byte create asking `Expect: 100-continue`,
/// with `headers` (each ending in CRLF) besides.
fn asking_to_send(server: &Server, len: usize, headers: &str) -> TcpStream {
    let mut s = connect(server);
    write!(
        s,
        "POST /customers HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n{headers}\
         Expect: 100-continue\r\nContent-Length: {len}\r\n\r\n"
    )
    .unwrap();
    s.flush().unwrap();
    s
}

/// A create whose JSON body is exactly `len` bytes long.
fn create_of_length(len: usize) -> Vec<u8> {
    let head = br#"{"name": "padded", "email": "pad@example.com", "note": ""#;
    let tail = br#""}"#;
    let mut body = head.to_vec();
    body.resize(len - tail.len(), b'a');
    body.extend_from_slice(tail);
    body
}

/// Send `body` once the twin says `100 Continue`; its answer, or the refusal it gave instead.
/// A refused body is never sent, so the twin never closes on a body half read.
fn send_create(server: &Server, body: &[u8], headers: &str) -> String {
    let mut s = asking_to_send(server, body.len(), headers);
    let interim = read_answer(&mut s);
    if !interim.starts_with("HTTP/1.1 100") {
        return interim;
    }
    s.write_all(body).unwrap();
    read_answer(&mut s)
}

/// [`send_create`] until the twin has given a closed connection's share back (it frees it once
/// it sees the connection closed; five seconds is a bound, not a figure): it must answer 201.
fn assert_created_once_room_comes_back(server: &Server, body: &[u8], headers: &str) {
    let mut answer = String::new();
    for _ in 0..100 {
        answer = send_create(server, body, headers);
        if !answer.starts_with("HTTP/1.1 503") {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(
        answer.starts_with("HTTP/1.1 201"),
        "{}",
        &answer[..200.min(answer.len())]
    );
}

/// While one client holds a 9 MiB body half sent, an 8 MiB one would take the bodies held past
/// 16 MiB: it is refused at its head, before any of it is read, with `503 server-busy` and
/// `Retry-After`; a small body still fits. Once the first client goes away, its share comes
/// back and the same 8 MiB create is answered.
#[test]
fn bodies_held_past_max_pending_body_mb_are_refused_503_until_one_ends() {
    let t = budget_twin();
    let server = t.serve(&[]);
    let first = held_body(&server, 9 * MIB);
    // Refused instead of `100 Continue`: none of its body is sent.
    let mut second = asking_to_send(&server, 8 * MIB, "");
    let answer = read_answer(&mut second);
    assert!(answer.starts_with("HTTP/1.1 503"), "{answer}");
    assert!(answer.contains("\"server-busy\""), "{answer}");
    assert!(answer.contains("max_pending_body_mb"), "{answer}");
    assert!(
        answer
            .to_ascii_lowercase()
            .contains("\r\nretry-after: 1\r\n"),
        "{answer}"
    );

    let small = send_create(&server, &create_of_length(100), "");
    assert!(small.starts_with("HTTP/1.1 201"), "{small}");

    drop(first);
    let big = create_of_length(8 * MIB);
    assert_created_once_room_comes_back(&server, &big, "");
}

/// A body sent without a length (chunked) takes its share as it arrives: it is refused at the
/// first bytes past the budget, not before.
#[test]
fn a_chunked_body_is_refused_503_once_its_bytes_pass_max_pending_body_mb() {
    let t = budget_twin();
    let server = t.serve(&[]);
    let _first = held_body(&server, 9 * MIB);
    let mut s = connect(&server);
    s.write_all(
        b"POST /customers HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n\
          Transfer-Encoding: chunked\r\n\r\n",
    )
    .unwrap();
    // Exactly the 7 MiB left: still held, no answer yet.
    let chunk = vec![b' '; MIB];
    for _ in 0..7 {
        write!(s, "{:x}\r\n", chunk.len()).unwrap();
        s.write_all(&chunk).unwrap();
        s.write_all(b"\r\n").unwrap();
    }
    s.flush().unwrap();
    s.set_read_timeout(Some(Duration::from_millis(300)))
        .unwrap();
    let mut probe = [0u8; 1];
    match s.read(&mut probe) {
        Err(e) => assert!(
            matches!(
                e.kind(),
                std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
            ),
            "{e}"
        ),
        Ok(n) => panic!("the twin answered ({n} bytes) a body still within its budget"),
    }
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    // One byte more is past it.
    s.write_all(b"1\r\n \r\n0\r\n\r\n").unwrap();
    let answer = read_answer(&mut s);
    assert!(answer.starts_with("HTTP/1.1 503"), "{answer}");
    assert!(answer.contains("\"server-busy\""), "{answer}");
}

/// A compressed body takes a whole body's share (16 MiB) while it is decoded, since a few
/// bytes sent may decode to that much, and is held at its decoded size after: while a 9 MiB
/// body is held, a gzip body is refused before it is decoded, even one that decodes to 100
/// bytes; once the share comes back, one decoding to 8 MiB is answered.
#[test]
fn a_compressed_body_takes_a_whole_bodys_share_while_it_is_decoded() {
    use flate2::{Compression, write::GzEncoder};

    let t = budget_twin();
    let server = t.serve(&[]);
    let gzip = |len: usize| {
        let mut gz = GzEncoder::new(Vec::new(), Compression::default());
        gz.write_all(&create_of_length(len)).unwrap();
        gz.finish().unwrap()
    };
    let (small, sent) = (gzip(100), gzip(8 * MIB));
    assert!(sent.len() < MIB, "{} bytes", sent.len());
    let first = held_body(&server, 9 * MIB);
    for body in [&small, &sent] {
        let answer = send_create(&server, body, "Content-Encoding: gzip\r\n");
        assert!(answer.starts_with("HTTP/1.1 503"), "{answer}");
        assert!(answer.contains("\"server-busy\""), "{answer}");
    }
    drop(first);
    assert_created_once_room_comes_back(&server, &sent, "Content-Encoding: gzip\r\n");
}
