//! `wraith import` keeps a HAR's secrets off disk wherever the HAR carries them: each test
//! writes a small HAR, imports it as a user would, searches every byte the twin holds for the
//! secrets and checks each became the token of its value (the same secret, the same token).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};
use wraith_recording::{Exchange, HmacKey, ScrubPolicy, Scrubber};

const KEY: &str = "import-secrets-test-key";

/// The token `wraith import` must write for `secret` under the tests' key.
fn token(secret: &str) -> String {
    Scrubber::new(ScrubPolicy::builtin_only(), HmacKey::from_bytes(KEY)).tokenize(secret)
}

fn headers(list: &[(&str, &str)]) -> Value {
    list.iter()
        .map(|(name, value)| json!({"name": name, "value": value}))
        .collect()
}

/// One HAR entry; a body is `(mime type, text)`.
fn entry(
    method: &str,
    url: &str,
    req_headers: &[(&str, &str)],
    req_body: Option<(&str, &str)>,
    resp_headers: &[(&str, &str)],
    resp_body: (&str, &str),
) -> Value {
    let mut request = json!({
        "method": method,
        "url": url,
        "httpVersion": "HTTP/1.1",
        "headers": headers(req_headers),
        "queryString": [],
        "cookies": [],
        "headersSize": -1,
        "bodySize": -1,
    });
    if let Some((mime, text)) = req_body {
        request["postData"] = json!({"mimeType": mime, "text": text});
    }
    json!({
        "startedDateTime": "2024-03-02T09:00:00.000Z",
        "time": 1.0,
        "request": request,
        "response": {
            "status": 200,
            "statusText": "OK",
            "httpVersion": "HTTP/1.1",
            "headers": headers(resp_headers),
            "cookies": [],
            "content": {"size": resp_body.1.len(), "mimeType": resp_body.0, "text": resp_body.1},
            "redirectURL": "",
            "headersSize": -1,
            "bodySize": -1,
        },
        "cache": {},
        "timings": {"send": 0, "wait": 1, "receive": 0},
    })
}

fn wraith(dir: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_wraith"));
    c.current_dir(dir)
        .env("WRAITH_HMAC_KEY", KEY)
        .env_remove("CI")
        .env("XDG_CONFIG_HOME", dir.join("config"));
    c
}

fn succeed(cmd: &mut Command) {
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Import a HAR of `entries` into a new twin, check that no byte the twin holds contains any
/// of `secrets`, and give back the imported exchanges in HAR order.
fn import_without_leaks(entries: Vec<Value>, secrets: &[&str]) -> Vec<Exchange> {
    let tmp = tempfile::tempdir().unwrap();
    succeed(wraith(tmp.path()).args(["init", "api", "--base-url", "https://api.example.com"]));
    let har = json!({"log": {
        "version": "1.2",
        "creator": {"name": "wraith-test", "version": "1"},
        "entries": entries,
    }});
    let file = tmp.path().join("secrets.har");
    std::fs::write(&file, serde_json::to_vec_pretty(&har).unwrap()).unwrap();
    succeed(wraith(tmp.path()).args(["import", "api"]).arg(&file));
    let mut files = Vec::new();
    crate::support::all_bytes(&tmp.path().join("twins/api"), &mut files);
    assert!(
        files
            .iter()
            .any(|(p, _)| p.to_string_lossy().ends_with(".wrec.zst"))
    );
    for (path, bytes) in &files {
        for secret in secrets {
            assert!(
                !bytes.windows(secret.len()).any(|w| w == secret.as_bytes()),
                "{secret} found in {}",
                path.display()
            );
        }
    }
    let mut sessions =
        wraith_recording::read_sessions(&tmp.path().join("twins/api/recordings/sessions")).unwrap();
    assert_eq!(sessions.len(), 1);
    sessions.remove(0).exchanges
}

#[test]
fn secrets_in_the_query_of_url_valued_headers_are_tokenized_on_import() {
    let secret = "REFERER_SECRET_1";
    let exchanges = import_without_leaks(
        vec![entry(
            "GET",
            "https://api.example.com/me",
            &[(
                "Referer",
                &format!("https://app.example/cb?state=s1&access_token={secret}"),
            )],
            None,
            &[
                (
                    "Location",
                    &format!("https://app.example/done#access_token={secret}&token_type=bearer"),
                ),
                (
                    "Link",
                    &format!("<https://api.example.com/me?page=2&token={secret}>; rel=\"next\""),
                ),
            ],
            ("application/json", "{}"),
        )],
        &[secret],
    );
    let tok = token(secret);
    let e = &exchanges[0];
    assert_eq!(
        e.request_header("referer").unwrap(),
        format!("https://app.example/cb?state=s1&access_token={tok}")
    );
    assert_eq!(
        e.response_header("location").unwrap(),
        format!("https://app.example/done#access_token={tok}&token_type=bearer")
    );
    assert_eq!(
        e.response_header("link").unwrap(),
        format!("<https://api.example.com/me?page=2&token={tok}>; rel=\"next\"")
    );
}

#[test]
fn credential_headers_beyond_authorization_are_tokenized_on_import() {
    let secret = "HEADER_SECRET_2";
    let exchanges = import_without_leaks(
        vec![entry(
            "POST",
            "https://api.example.com/v3/auth/tokens",
            &[
                ("X-Auth-Token", secret),
                ("Private-Token", secret),
                ("X-Amz-Security-Token", secret),
                ("Proxy-Authorization", &format!("Basic {secret}")),
                ("Idempotency-Key", "idem-1"),
            ],
            None,
            &[("X-Subject-Token", secret)],
            ("application/json", "{}"),
        )],
        &[secret],
    );
    let tok = token(secret);
    let e = &exchanges[0];
    for name in ["x-auth-token", "private-token", "x-amz-security-token"] {
        assert_eq!(e.request_header(name).unwrap(), tok, "{name}");
    }
    assert_eq!(
        e.request_header("proxy-authorization").unwrap(),
        format!("Basic {tok}")
    );
    assert_eq!(e.response_header("x-subject-token").unwrap(), tok);
    assert_eq!(e.request_header("idempotency-key").unwrap(), "idem-1");
}

#[test]
fn bracketed_secret_names_in_queries_and_forms_are_tokenized_on_import() {
    let secret = "BRACKET_SECRET_3";
    let exchanges = import_without_leaks(
        vec![entry(
            "POST",
            &format!("https://api.example.com/session?token[]={secret}&page=1"),
            &[("Content-Type", "application/x-www-form-urlencoded")],
            Some((
                "application/x-www-form-urlencoded",
                &format!("user[name]=bob&user[password]={secret}&auth%5Baccess_token%5D={secret}"),
            )),
            &[],
            ("application/json", "{}"),
        )],
        &[secret],
    );
    let tok = token(secret);
    let e = &exchanges[0];
    assert_eq!(e.request.query, format!("token[]={tok}&page=1"));
    assert_eq!(
        String::from_utf8(e.request.body.to_vec()).unwrap(),
        format!("user[name]=bob&user[password]={tok}&auth%5Baccess_token%5D={tok}")
    );
}

#[test]
fn a_form_encoded_token_answer_is_scrubbed_on_import() {
    let access = "FORM_ACCESS_SECRET_4";
    let refresh = "FORM_REFRESH_SECRET_4";
    let exchanges = import_without_leaks(
        vec![
            entry(
                "POST",
                "https://api.example.com/login/oauth/access_token",
                &[("Content-Type", "application/x-www-form-urlencoded")],
                Some((
                    "application/x-www-form-urlencoded",
                    "grant_type=client_credentials",
                )),
                &[("Content-Type", "application/x-www-form-urlencoded")],
                (
                    "application/x-www-form-urlencoded",
                    &format!("access_token={access}&token_type=bearer&refresh_token={refresh}"),
                ),
            ),
            entry(
                "GET",
                "https://api.example.com/user",
                &[("Authorization", &format!("Bearer {access}"))],
                None,
                &[],
                ("application/json", "{}"),
            ),
        ],
        &[access, refresh],
    );
    let tok = token(access);
    assert_eq!(
        String::from_utf8(exchanges[0].response_body()).unwrap(),
        format!(
            "access_token={tok}&token_type=bearer&refresh_token={}",
            token(refresh)
        )
    );
    // The token the answer issued is the one the next request sends.
    assert_eq!(
        exchanges[1].request_header("authorization").unwrap(),
        format!("Bearer {tok}")
    );
}

#[test]
fn a_gzip_request_body_is_decoded_and_scrubbed_on_import() {
    use base64::Engine;
    use std::io::Write;
    let secret = "GZIP_BODY_SECRET_5";
    let plain = format!(r#"{{"user":"bob","password":"{secret}"}}"#);
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(plain.as_bytes()).unwrap();
    let text = base64::engine::general_purpose::STANDARD.encode(gz.finish().unwrap());
    let mut compressed = entry(
        "POST",
        "https://api.example.com/login",
        &[
            ("Content-Type", "application/json"),
            ("Content-Encoding", "gzip"),
        ],
        Some(("application/json", &text)),
        &[],
        ("application/json", "{}"),
    );
    compressed["request"]["postData"]["_encoding"] = json!("base64");
    let exchanges = import_without_leaks(vec![compressed], &[secret]);
    let e = &exchanges[0];
    assert_eq!(e.request_header("content-encoding"), None);
    let body: Value = serde_json::from_slice(&e.request.body).unwrap();
    assert_eq!(body, json!({"user": "bob", "password": token(secret)}));
}

#[test]
fn secret_named_multipart_fields_are_tokenized_on_import_with_the_framing_kept() {
    let secret = "MULTIPART_SECRET_6";
    let body = |password: &str| {
        format!(
            "--XbOuNdArY\r\nContent-Disposition: form-data; name=\"username\"\r\n\r\nbob\r\n\
             --XbOuNdArY\r\nContent-Disposition: form-data; name=\"password\"\r\n\r\n{password}\r\n\
             --XbOuNdArY\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.txt\"\r\n\
             Content-Type: text/plain\r\n\r\nhello\r\n--XbOuNdArY--\r\n"
        )
    };
    let ct = "multipart/form-data; boundary=XbOuNdArY";
    let exchanges = import_without_leaks(
        vec![entry(
            "POST",
            "https://api.example.com/login",
            &[("Content-Type", ct)],
            Some((ct, &body(secret))),
            &[],
            ("application/json", "{}"),
        )],
        &[secret],
    );
    assert_eq!(
        String::from_utf8(exchanges[0].request.body.to_vec()).unwrap(),
        body(&token(secret))
    );
}

/// A form given as `postData.params` (no `text`) is stored in the form its type names, or as
/// a urlencoded form under that form's type: its password is scrubbed whatever the HAR's
/// `mimeType` said.
#[test]
fn a_password_given_as_post_data_params_is_tokenized_on_import_whatever_the_mime_type() {
    let secret = "PARAMS_SECRET_7";
    let mimes = [
        "multipart/form-data; boundary=XYZ",
        "multipart/form-data",
        "",
        "application/json",
    ];
    let entries = mimes
        .iter()
        .map(|mime| {
            let mut e = entry(
                "POST",
                "https://api.example.com/login",
                &[],
                None,
                &[],
                ("application/json", "{}"),
            );
            e["request"]["postData"] = json!({"mimeType": mime, "params": [
                {"name": "user", "value": "bob"},
                {"name": "password", "value": secret},
            ]});
            e
        })
        .collect();
    let exchanges = import_without_leaks(entries, &[secret]);
    let tok = token(secret);
    for (e, mime) in exchanges.iter().zip(mimes) {
        let body = String::from_utf8(e.request.body.to_vec()).unwrap();
        assert!(
            body.contains(&tok) && body.contains("bob"),
            "{mime}: {body}"
        );
    }
    assert_eq!(
        exchanges[0].request.content_type.as_deref(),
        Some("multipart/form-data; boundary=XYZ")
    );
    assert!(
        exchanges[1]
            .request
            .content_type
            .as_deref()
            .unwrap()
            .starts_with("multipart/form-data; boundary=")
    );
    for e in &exchanges[2..] {
        assert_eq!(
            e.request.content_type.as_deref(),
            Some("application/x-www-form-urlencoded")
        );
        assert_eq!(
            String::from_utf8(e.request.body.to_vec()).unwrap(),
            format!("user=bob&password={tok}")
        );
    }
}

/// Browsers write `"text": ""` beside a form's params: the params are the body, not dropped.
#[test]
fn post_data_params_beside_an_empty_text_are_imported_as_the_body() {
    let secret = "EMPTY_TEXT_SECRET_9";
    let mut e = entry(
        "POST",
        "https://api.example.com/login",
        &[],
        None,
        &[],
        ("application/json", "{}"),
    );
    e["request"]["postData"] = json!({
        "mimeType": "application/x-www-form-urlencoded",
        "text": "",
        "params": [{"name": "user", "value": "bob"}, {"name": "password", "value": secret}],
    });
    let exchanges = import_without_leaks(vec![e], &[secret]);
    assert_eq!(
        String::from_utf8(exchanges[0].request.body.to_vec()).unwrap(),
        format!("user=bob&password={}", token(secret))
    );
}

#[test]
fn a_base64_post_data_marked_encoding_is_decoded_and_scrubbed_on_import() {
    use base64::Engine;
    let secret = "BASE64_SECRET_10";
    let plain = format!(r#"{{"user":"bob","password":"{secret}"}}"#);
    let mut e = entry(
        "POST",
        "https://api.example.com/login",
        &[],
        None,
        &[],
        ("application/json", "{}"),
    );
    e["request"]["postData"] = json!({
        "mimeType": "application/json",
        "text": base64::engine::general_purpose::STANDARD.encode(&plain),
        "encoding": "base64",
    });
    let exchanges = import_without_leaks(vec![e], &[secret]);
    let body: Value = serde_json::from_slice(&exchanges[0].request.body).unwrap();
    assert_eq!(body, json!({"user": "bob", "password": token(secret)}));
}

#[test]
fn a_form_body_sent_without_a_content_type_is_scrubbed_as_a_form_on_import() {
    let secret = "UNTYPED_FORM_SECRET_8";
    let exchanges = import_without_leaks(
        vec![entry(
            "POST",
            "https://api.example.com/login",
            &[],
            Some(("", &format!("user=bob&password={secret}"))),
            &[],
            ("application/json", "{}"),
        )],
        &[secret],
    );
    assert_eq!(
        String::from_utf8(exchanges[0].request.body.to_vec()).unwrap(),
        format!("user=bob&password={}", token(secret))
    );
}

#[test]
fn json_lines_of_event_stream_and_ndjson_answers_are_scrubbed_on_import() {
    let secret = "STREAM_SECRET_7";
    let sse =
        |t: &str| format!("event: session\ndata: {{\"access_token\":\"{t}\"}}\n\ndata: [DONE]\n\n");
    let ndjson = |t: &str| format!("{{\"id\":1}}\n{{\"token\":\"{t}\"}}\n");
    let exchanges = import_without_leaks(
        vec![
            entry(
                "GET",
                "https://api.example.com/events",
                &[],
                None,
                &[("Content-Type", "text/event-stream")],
                ("text/event-stream", &sse(secret)),
            ),
            entry(
                "GET",
                "https://api.example.com/export",
                &[],
                None,
                &[("Content-Type", "application/x-ndjson")],
                ("application/x-ndjson", &ndjson(secret)),
            ),
        ],
        &[secret],
    );
    let tok = token(secret);
    assert_eq!(exchanges[0].response_body(), sse(&tok).into_bytes());
    assert_eq!(exchanges[1].response_body(), ndjson(&tok).into_bytes());
}

/// Imports one `text/event-stream` answer of body `sse(secret)` and asserts that the secret
/// left no trace and the stored body is `sse` of the secret's scrub token, line for line.
fn assert_event_stream_scrubbed_on_import(secret: &str, sse: impl Fn(&str) -> String) {
    let exchanges = import_without_leaks(
        vec![entry(
            "GET",
            "https://api.example.com/grants",
            &[],
            None,
            &[("Content-Type", "text/event-stream")],
            ("text/event-stream", &sse(secret)),
        )],
        &[secret],
    );
    assert_eq!(
        exchanges[0].response_body(),
        sse(&token(secret)).into_bytes()
    );
}

#[test]
fn an_event_stream_document_split_over_data_lines_is_scrubbed_on_import() {
    let secret = "SPLIT_STREAM_SECRET_9";
    // A pretty-printed document: the secret's key and its value on different data lines.
    let sse = |t: &str| {
        format!("event: grant\ndata: {{\"access_token\":\ndata:   \"{t}\",\ndata: \"n\": 1}}\n\n")
    };
    assert_event_stream_scrubbed_on_import(secret, sse);
}

#[test]
fn an_event_stream_event_holding_several_documents_is_scrubbed_document_by_document_on_import() {
    let secret = "SEQUENCE_STREAM_SECRET_3";
    // One event, three JSON documents joined by its data lines: a one-line document, then
    // two pretty-printed ones (the secret's key and value inside the first of those), and a
    // `[DONE]` that is no JSON.
    let sse = |t: &str| {
        format!(
            "event: grant\ndata: {{\"type\":\"start\"}}\ndata: {{\ndata:   \"access_token\": \"{t}\",\n\
             data:   \"n\": 1\ndata: }}\ndata: [\ndata:   {{\"refresh_token\":\ndata:     \"{t}\"}}\n\
             data: ]\ndata: [DONE]\n\n"
        )
    };
    assert_event_stream_scrubbed_on_import(secret, sse);
}

#[test]
fn an_event_streams_data_lines_with_an_id_between_them_are_scrubbed_as_one_document_on_import() {
    let secret = "INTERLEAVED_STREAM_SECRET_5";
    let sse = |t: &str| format!("data: {{\"access_token\":\nid: 41\ndata:   \"{t}\"}}\n\n");
    assert_event_stream_scrubbed_on_import(secret, sse);
}

#[test]
fn a_json_document_held_in_a_json_string_is_scrubbed_on_import() {
    let secret = "EMBEDDED_SECRET_8";
    let body = |t: &str| {
        serde_json::to_string(&json!({
            "type": "session.created",
            "data": json!({"user": "bob", "refresh_token": t}).to_string(),
        }))
        .unwrap()
    };
    let exchanges = import_without_leaks(
        vec![entry(
            "GET",
            "https://api.example.com/webhooks/last",
            &[],
            None,
            &[("Content-Type", "application/json")],
            ("application/json", &body(secret)),
        )],
        &[secret],
    );
    assert_eq!(
        exchanges[0].response_body(),
        body(&token(secret)).into_bytes()
    );
}

/// An answer cut short (a HAR saved while a stream was still coming) is no JSON document, and
/// an NDJSON line may hold only part of an array: their secret-named members are tokenized
/// all the same. A secret the query sent and the answer echoes gets the query's token there.
#[test]
fn secrets_in_json_cut_short_and_in_echoed_query_values_are_tokenized_on_import() {
    let (cut, part, sent) = (
        "CUT_SHORT_SECRET_1",
        "PART_LINE_SECRET_2",
        "QUERY_ECHO_SECRET_3",
    );
    let cut_body = |t: &str| format!(r#"[{{"id":1,"access_token":"{t}"}},{{"id":2,"#);
    let part_body = |t: &str| format!("[{{\"token\":\"{t}\"}},\n");
    let echo_body = |t: &str| format!(r#"{{"url":"/lookup?password={t}"}}"#);
    let exchanges = import_without_leaks(
        vec![
            entry(
                "GET",
                "https://api.example.com/list",
                &[],
                None,
                &[("Content-Type", "application/json")],
                ("application/json", &cut_body(cut)),
            ),
            entry(
                "GET",
                "https://api.example.com/export",
                &[],
                None,
                &[("Content-Type", "application/x-ndjson")],
                ("application/x-ndjson", &part_body(part)),
            ),
            entry(
                "GET",
                &format!("https://api.example.com/lookup?password={sent}"),
                &[],
                None,
                &[("Content-Type", "application/json")],
                ("application/json", &echo_body(sent)),
            ),
        ],
        &[cut, part, sent],
    );
    assert_eq!(
        exchanges[0].response_body(),
        cut_body(&token(cut)).into_bytes()
    );
    assert_eq!(
        exchanges[1].response_body(),
        part_body(&token(part)).into_bytes()
    );
    assert_eq!(
        exchanges[2].response_body(),
        echo_body(&token(sent)).into_bytes()
    );
    assert_eq!(
        exchanges[2].request.query,
        format!("password={}", token(sent))
    );
}

/// Import reads a query as `wraith record` does, `+` as a space: the secret of
/// `?access_token=a+b+secret1` gets the token of `a b secret1`, the one record stores for it
/// in a query, a form or a JSON body; the rest of the query is kept as written.
#[test]
fn a_query_secret_spelled_with_plus_signs_is_tokenized_as_record_tokenizes_it() {
    let exchanges = import_without_leaks(
        vec![
            entry(
                "GET",
                "https://api.example.com/q?access_token=a+b+secret1&q=red+shoes",
                &[],
                None,
                &[],
                ("application/json", "{}"),
            ),
            entry(
                "POST",
                "https://api.example.com/j",
                &[],
                Some(("application/json", r#"{"access_token":"a b secret1"}"#)),
                &[],
                ("application/json", "{}"),
            ),
        ],
        &["secret1"],
    );
    let tok = token("a b secret1");
    assert_eq!(
        exchanges[0].request.query,
        format!("access_token={tok}&q=red+shoes")
    );
    let body: Value = serde_json::from_slice(&exchanges[1].request.body).unwrap();
    assert_eq!(body["access_token"], tok.as_str());
}

#[test]
fn secrets_named_in_any_case_style_and_url_signatures_are_tokenized_on_import() {
    let secrets = [
        "CASE_STYLE_SECRET_1",
        "CASE_STYLE_SECRET_2",
        "-----BEGIN RSA PRIVATE KEY-----CASE_STYLE_SECRET_3",
        "CASE_STYLE_SECRET_4",
        "eyJhbGciOiJIUzI1NiJ9.e30.CASE_STYLE_SECRET_5",
        "URL_SIG_SECRET_6",
        "URL_AMZ_SECRET_7",
        "URL_KEY_SECRET_8",
    ];
    let [apikey, secret_key, pem, aws, jwt, sig, amz, key] = secrets;
    let exchanges = import_without_leaks(
        vec![entry(
            "POST",
            &format!(
                "https://api.example.com/v1/users?sig={sig}&X-Amz-Signature={amz}&key={key}&page=2"
            ),
            &[],
            Some((
                "application/json",
                &json!({
                    "apiKey": apikey,
                    "secret_key": secret_key,
                    "credentials": {"private_key": pem},
                    "key": "item-7",
                })
                .to_string(),
            )),
            &[],
            (
                "application/json",
                &json!({
                    "aws_secret_access_key": aws,
                    "id_token": jwt,
                    "token_type": "bearer",
                    "expires_in": 3600,
                })
                .to_string(),
            ),
        )],
        &secrets,
    );
    let e = &exchanges[0];
    assert_eq!(
        e.request.query,
        format!(
            "sig={}&X-Amz-Signature={}&key={}&page=2",
            token(sig),
            token(amz),
            token(key)
        )
    );
    let req: Value = serde_json::from_slice(&e.request.body).unwrap();
    assert_eq!(req["apiKey"], token(apikey));
    assert_eq!(req["secret_key"], token(secret_key));
    assert_eq!(req["credentials"]["private_key"], token(pem));
    assert_eq!(req["key"], "item-7");
    let resp: Value = serde_json::from_slice(&e.frames[0].body).unwrap();
    assert_eq!(resp["aws_secret_access_key"], token(aws));
    assert_eq!(resp["id_token"], token(jwt));
    assert_eq!(resp["token_type"], "bearer");
    assert_eq!(resp["expires_in"], 3600);
}

#[test]
fn a_credential_the_answer_echoes_is_tokenized_there_on_import() {
    let secret = "ECHOED_SECRET_11";
    let exchanges = import_without_leaks(
        vec![entry(
            "GET",
            "https://api.example.com/v1/echo",
            &[("Authorization", &format!("Bearer {secret}"))],
            None,
            &[],
            (
                "application/json",
                &json!({
                    "headers": {"Authorization": format!("Bearer {secret}")},
                    "url": format!("https://api.example.com/v1/echo?access_token={secret}"),
                    "seen": secret,
                })
                .to_string(),
            ),
        )],
        &[secret],
    );
    let tok = token(secret);
    let e = &exchanges[0];
    assert_eq!(
        e.request_header("authorization").unwrap(),
        format!("Bearer {tok}")
    );
    let resp: Value = serde_json::from_slice(&e.frames[0].body).unwrap();
    assert_eq!(resp["headers"]["Authorization"], format!("Bearer {tok}"));
    assert_eq!(
        resp["url"],
        format!("https://api.example.com/v1/echo?access_token={tok}")
    );
    assert_eq!(resp["seen"], tok);
}

#[test]
fn a_url_an_answer_holds_has_its_query_secrets_tokenized_on_import() {
    let secret = "ECHOED_URL_SECRET_12";
    let exchanges = import_without_leaks(
        vec![entry(
            "GET",
            "https://api.example.com/v1/echo",
            &[],
            None,
            &[],
            (
                "application/json",
                &json!({"url": format!("https://api.example.com/v1/echo?access_token={secret}")})
                    .to_string(),
            ),
        )],
        &[secret],
    );
    let resp: Value = serde_json::from_slice(&exchanges[0].frames[0].body).unwrap();
    assert_eq!(
        resp["url"],
        format!(
            "https://api.example.com/v1/echo?access_token={}",
            token(secret)
        )
    );
}

/// A HAR response body a producer stored still gzip-compressed (base64 of the stream, with its
/// `Content-Encoding`) is imported decoded, so its secrets are tokenized like any other's.
#[test]
fn a_response_body_stored_still_compressed_is_decoded_and_scrubbed_on_import() {
    use base64::Engine;
    use std::io::Write;
    let secret = "GZIPPED_ANSWER_SECRET_12";
    let plain = json!({"id": "u_9", "access_token": secret}).to_string();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(plain.as_bytes()).unwrap();
    let mut e = entry(
        "GET",
        "https://api.example.com/v1/me",
        &[],
        None,
        &[("Content-Encoding", "gzip")],
        ("application/json", ""),
    );
    e["response"]["content"]["text"] =
        json!(base64::engine::general_purpose::STANDARD.encode(gz.finish().unwrap()));
    e["response"]["content"]["encoding"] = json!("base64");
    let exchanges = import_without_leaks(vec![e], &[secret]);
    let body: Value = serde_json::from_slice(&exchanges[0].frames[0].body).unwrap();
    assert_eq!(body, json!({"id": "u_9", "access_token": token(secret)}));
    assert_eq!(exchanges[0].response_header("content-encoding"), None);
}
