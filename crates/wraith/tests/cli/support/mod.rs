//! Shared helpers for the black-box `wraith serve` tests: twin folders made with the real
//! `wraith init`, models written in code, the real binary started on 127.0.0.1 port 0 with
//! `--ready-json`, and a small HTTP client.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

pub mod har;
pub mod model;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;
use wraith_model::Model;

/// Path of the `wraith` binary under test.
pub fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_wraith")
}

/// Run every command at once (stdout dropped) and assert each exits 0, showing the stderr of
/// one that did not: for commands that must take turns on one twin.
pub fn all_at_once_succeed(commands: Vec<Command>) {
    let children: Vec<Child> = commands
        .into_iter()
        .map(|mut c| {
            c.stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for child in children {
        let out = child.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// The bundled example twin (`examples/twins/shop`: recordings, fixtures, its Lua handler and
/// authored route) copied into its own temp dir, without a generated `model/` or `reports/`, so
/// a test can change it freely and serve re-synthesizes it.
pub fn example_shop_twin() -> Twin {
    fn copy_dir(from: &Path, to: &Path) {
        std::fs::create_dir_all(to).unwrap();
        for entry in std::fs::read_dir(from).unwrap() {
            let entry = entry.unwrap();
            let name = entry.file_name();
            if name == "model" || name == "reports" {
                continue;
            }
            let target = to.join(&name);
            if entry.file_type().unwrap().is_dir() {
                copy_dir(&entry.path(), &target);
            } else {
                std::fs::copy(entry.path(), target).unwrap();
            }
        }
    }
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("twins").join("shop");
    copy_dir(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/twins/shop"),
        &root,
    );
    Twin {
        tmp,
        root,
        name: "shop".to_string(),
    }
}

/// A twin folder made by `wraith init` inside its own temp dir.
pub struct Twin {
    pub tmp: tempfile::TempDir,
    pub root: PathBuf,
    pub name: String,
}

impl Twin {
    /// `wraith init <name> --base-url <base_url>` in a fresh temp dir.
    pub fn init(name: &str, base_url: &str) -> Twin {
        let tmp = tempfile::tempdir().unwrap();
        let out = Command::new(bin())
            .current_dir(tmp.path())
            .args(["init", name, "--base-url", base_url])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "wraith init failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let root = tmp.path().join("twins").join(name);
        assert!(
            root.join("wraith.toml").is_file(),
            "init made no wraith.toml"
        );
        Twin {
            tmp,
            root,
            name: name.to_string(),
        }
    }

    /// Write `model/twin.wir.json` (canonical JSON, as synth writes it).
    pub fn write_model(&self, model: &Model) {
        let text = wraith_model::to_canonical_json(model).unwrap();
        self.write("model/twin.wir.json", &text);
    }

    /// Write a file under the twin folder, creating parent folders.
    pub fn write(&self, rel: &str, text: &str) {
        let p = self.root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    /// Append TOML to `wraith.toml`.
    pub fn append_toml(&self, text: &str) {
        let p = self.root.join("wraith.toml");
        let mut s = std::fs::read_to_string(&p).unwrap();
        s.push('\n');
        s.push_str(text);
        std::fs::write(p, s).unwrap();
    }

    /// Replace `key = ...` inside `[section]` of `wraith.toml` (adding the section when absent).
    pub fn set_toml(&self, section: &str, key: &str, value: &str) {
        let p = self.root.join("wraith.toml");
        let text = std::fs::read_to_string(&p).unwrap();
        let mut doc: toml_edit::DocumentMut = text.parse().unwrap();
        let mut table = doc.as_table_mut();
        for part in section.split('.') {
            if !table.contains_key(part) {
                let mut t = toml_edit::Table::new();
                t.set_implicit(true);
                table.insert(part, toml_edit::Item::Table(t));
            }
            table = table[part].as_table_mut().unwrap();
        }
        let v: toml_edit::Value = value.parse().unwrap();
        table.insert(key, toml_edit::value(v));
        std::fs::write(p, doc.to_string()).unwrap();
    }

    pub fn path(&self) -> &Path {
        &self.root
    }

    pub fn path_str(&self) -> String {
        self.root.display().to_string()
    }

    /// `wraith <args>` run in the twin's temp dir with stdin closed: its output, whatever its
    /// exit code.
    pub fn wraith(&self, args: &[&str]) -> std::process::Output {
        Command::new(bin())
            .current_dir(self.tmp.path())
            .args(args)
            .stdin(Stdio::null())
            .output()
            .unwrap()
    }

    /// `wraith check <twin> --json` (in memory): its report.
    pub fn check_report(&self) -> Value {
        let out = std::process::Command::new(bin())
            .current_dir(self.path())
            .args(["check", &self.path_str(), "--json"])
            .output()
            .unwrap();
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
            panic!(
                "check printed no report ({e}): {}",
                String::from_utf8_lossy(&out.stderr)
            )
        })
    }

    /// Run `wraith serve` expecting it to exit on its own (a refusal); returns (code, stderr).
    pub fn serve_expect_exit(&self, args: &[&str]) -> (i32, String) {
        self.serve_expect_exit_env(args, &[])
    }

    /// Like [`Twin::serve_expect_exit`], with extra environment variables.
    pub fn serve_expect_exit_env(&self, args: &[&str], env: &[(&str, &str)]) -> (i32, String) {
        let mut child = Command::new(bin())
            .current_dir(self.tmp.path())
            .arg("serve")
            .arg(self.path_str())
            .args(args)
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            if let Some(status) = child.try_wait().unwrap() {
                let out = child.wait_with_output().unwrap();
                return (
                    status.code().unwrap_or(-1),
                    String::from_utf8_lossy(&out.stderr).into_owned(),
                );
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                panic!("wraith serve {args:?} was expected to exit but kept running");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Start `wraith serve <twin> --port 0 --ready-json <tmp> <args>` and wait until ready.
    pub fn serve(&self, args: &[&str]) -> Server {
        Server::start(self, args, &[])
    }

    /// Like [`Twin::serve`], with extra environment variables.
    pub fn serve_env(&self, args: &[&str], env: &[(&str, &str)]) -> Server {
        Server::start(self, args, env)
    }
}

/// A running `wraith serve`; killed on drop.
pub struct Server {
    pub child: Option<Child>,
    pub url: String,
    pub ready: Value,
    pub ready_path: PathBuf,
    stderr_path: PathBuf,
    pub client: reqwest::Client,
}

static COUNTER: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

impl Server {
    fn start(twin: &Twin, args: &[&str], env: &[(&str, &str)]) -> Server {
        let n = COUNTER.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let ready_path = twin.tmp.path().join(format!("ready-{n}.json"));
        let stderr_path = twin.tmp.path().join(format!("serve-{n}.stderr"));
        let stderr = std::fs::File::create(&stderr_path).unwrap();
        let mut cmd = Command::new(bin());
        cmd.current_dir(twin.tmp.path())
            .arg("serve")
            .arg(twin.path_str())
            .args(["--port", "0", "--ready-json"])
            .arg(&ready_path)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(stderr);
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().unwrap();
        let deadline = Instant::now() + Duration::from_secs(120);
        loop {
            if let Ok(text) = std::fs::read_to_string(&ready_path)
                && let Ok(ready) = serde_json::from_str::<Value>(&text)
            {
                let url = ready["serve"]["url"].as_str().unwrap().to_string();
                return Server {
                    child: Some(child),
                    url,
                    ready,
                    ready_path,
                    stderr_path,
                    client: reqwest::Client::builder()
                        .timeout(Duration::from_secs(30))
                        .build()
                        .unwrap(),
                };
            }
            if let Some(status) = child.try_wait().unwrap() {
                panic!(
                    "wraith serve exited early with {status}: {}",
                    std::fs::read_to_string(&stderr_path).unwrap_or_default()
                );
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                panic!("wraith serve did not become ready");
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// What the server wrote on stderr so far.
    pub fn stderr(&self) -> String {
        std::fs::read_to_string(&self.stderr_path).unwrap_or_default()
    }

    pub fn pid(&self) -> u32 {
        self.child.as_ref().unwrap().id()
    }

    /// Send SIGTERM and wait for the exit code.
    pub fn terminate(&mut self) -> i32 {
        self.signal("-TERM")
    }

    /// Send a signal (`-TERM`, `-INT`) and wait for the exit code.
    pub fn signal(&mut self, sig: &str) -> i32 {
        let mut child = self.child.take().unwrap();
        let ok = Command::new("kill")
            .args([sig, &child.id().to_string()])
            .status()
            .unwrap();
        assert!(ok.success());
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Some(s) = child.try_wait().unwrap() {
                return s.code().unwrap_or(-1);
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                panic!("wraith serve did not stop on {sig}");
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Send a request; `session` sets `X-Wraith-Session`.
    pub async fn send(
        &self,
        method: &str,
        path: &str,
        session: Option<&str>,
        headers: &[(&str, &str)],
        body: Option<Value>,
    ) -> Resp {
        let method = reqwest::Method::from_bytes(method.as_bytes()).unwrap();
        let mut rb = self.client.request(method, format!("{}{path}", self.url));
        if let Some(s) = session {
            rb = rb.header("X-Wraith-Session", s);
        }
        for (k, v) in headers {
            rb = rb.header(*k, *v);
        }
        if let Some(b) = body {
            rb = rb
                .header("content-type", "application/json")
                .body(serde_json::to_vec(&b).unwrap());
        }
        let r = rb.send().await.unwrap();
        Resp::read(r).await
    }

    pub async fn get(&self, path: &str, session: Option<&str>) -> Resp {
        self.send("GET", path, session, &[], None).await
    }

    pub async fn post(&self, path: &str, session: Option<&str>, body: Value) -> Resp {
        self.send("POST", path, session, &[], Some(body)).await
    }

    pub async fn delete(&self, path: &str, session: Option<&str>) -> Resp {
        self.send("DELETE", path, session, &[], None).await
    }

    /// `GET` with an `X-Wraith-Session` of raw bytes (not UTF-8, which `send` cannot carry).
    pub async fn get_raw_session(&self, path: &str, session: &[u8]) -> Resp {
        let value = reqwest::header::HeaderValue::from_bytes(session).unwrap();
        let r = self
            .client
            .get(format!("{}{path}", self.url))
            .header("X-Wraith-Session", value)
            .send()
            .await
            .unwrap();
        Resp::read(r).await
    }

    /// `POST` a `multipart/form-data` `body` whose parts `boundary` separates.
    pub async fn post_multipart(
        &self,
        path: &str,
        session: &str,
        boundary: &str,
        body: String,
    ) -> Resp {
        let r = self
            .client
            .post(format!("{}{path}", self.url))
            .header("X-Wraith-Session", session)
            .header(
                "content-type",
                format!("multipart/form-data; boundary={boundary}"),
            )
            .body(body)
            .send()
            .await
            .unwrap();
        Resp::read(r).await
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// A response, read whole.
#[derive(Debug, Clone)]
pub struct Resp {
    pub status: u16,
    pub headers: BTreeMap<String, Vec<String>>,
    pub body: Vec<u8>,
}

impl Resp {
    pub async fn read(r: reqwest::Response) -> Resp {
        let status = r.status().as_u16();
        let mut headers: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for (k, v) in r.headers() {
            headers
                .entry(k.as_str().to_string())
                .or_default()
                .push(String::from_utf8_lossy(v.as_bytes()).into_owned());
        }
        let body = r.bytes().await.unwrap().to_vec();
        Resp {
            status,
            headers,
            body,
        }
    }

    /// Assert the status, showing the body when it differs.
    #[track_caller]
    pub fn assert_status(&self, status: u16) {
        assert_eq!(
            self.status,
            status,
            "{}",
            String::from_utf8_lossy(&self.body)
        );
    }

    /// First value of a header (lowercase name).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .get(&name.to_ascii_lowercase())
            .and_then(|v| v.first())
            .map(String::as_str)
    }

    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|e| {
            panic!(
                "body is not JSON ({e}): status {} body {:?}",
                self.status,
                String::from_utf8_lossy(&self.body)
            )
        })
    }

    pub fn provenance(&self) -> Option<&str> {
        self.header("x-wraith-provenance")
    }

    /// Every `x-wraith-*` header name present.
    pub fn wraith_headers(&self) -> Vec<String> {
        self.headers
            .keys()
            .filter(|k| k.starts_with("x-wraith-"))
            .cloned()
            .collect()
    }
}

/// The string `id`s of a list's items, in order (`items` is the array).
pub fn item_ids(items: &Value) -> Vec<String> {
    items
        .as_array()
        .unwrap_or_else(|| panic!("a list: {items}"))
        .iter()
        .map(|i| {
            i["id"]
                .as_str()
                .unwrap_or_else(|| panic!("an item with a string id: {i}"))
                .to_string()
        })
        .collect()
}

/// Make a fifo at `path` (the `mkfifo` command: the test crates do not link libc).
#[cfg(unix)]
pub fn mkfifo(path: &Path) {
    let made = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .unwrap();
    assert!(made.success(), "mkfifo {}", path.display());
}

/// Every file under `root`, with `.zst` files also decompressed.
pub fn all_bytes(root: &Path, out: &mut Vec<(PathBuf, Vec<u8>)>) {
    for entry in std::fs::read_dir(root).unwrap() {
        let p = entry.unwrap().path();
        if p.is_dir() {
            all_bytes(&p, out);
        } else {
            let bytes = std::fs::read(&p).unwrap();
            if p.to_string_lossy().ends_with(".zst") {
                out.push((
                    p.clone(),
                    wraith_recording::wrec::decompress(&bytes).unwrap(),
                ));
            }
            out.push((p, bytes));
        }
    }
}

/// Whether `text` (a command's output) holds a character a terminal acts on besides the line
/// break: a C0 or C1 control, DEL, or a bidirectional embedding, override or isolate.
pub fn has_terminal_controls(text: &str) -> bool {
    text.chars().any(|c| {
        (c.is_control() && c != '\n')
            || matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
    })
}
