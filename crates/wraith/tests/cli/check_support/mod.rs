//! Helpers for the `check`, `coverage` and `lint` black-box tests: a copy of the demo twin
//! (the shared corpus's WREC recordings, as they are) in a temp dir, the real binary, JSON out.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

pub mod fake_target;
pub mod notes;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

use serde_json::Value;

pub fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_wraith")
}

pub fn shared() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared")
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let p = e.path();
        let dest = to.join(e.file_name());
        if p.is_dir() {
            copy_dir(&p, &dest);
        } else {
            std::fs::copy(&p, &dest).unwrap();
        }
    }
}

/// A twin folder in a temp dir.
pub struct DemoTwin {
    pub tmp: tempfile::TempDir,
    pub root: PathBuf,
}

impl DemoTwin {
    /// The demo twin's config, schema and recordings, not yet synthesized.
    pub fn copy() -> DemoTwin {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("demo");
        let src = shared().join("corpora/wraith-demo");
        copy_dir(&src, &root);
        std::fs::create_dir_all(root.join("reports")).unwrap();
        DemoTwin { tmp, root }
    }

    /// The bundled example twin (`examples/twins/shop`) as shipped, without a generated
    /// `model/` or `reports/`: not yet synthesized.
    pub fn example_shop() -> DemoTwin {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("shop");
        copy_dir(
            &Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/twins/shop"),
            &root,
        );
        let _ = std::fs::remove_dir_all(root.join("model"));
        let _ = std::fs::remove_dir_all(root.join("reports"));
        DemoTwin { tmp, root }
    }

    /// A new empty twin made by `wraith init <name> --base-url <base_url>` in a temp dir.
    pub fn init(name: &str, base_url: &str) -> DemoTwin {
        let tmp = tempfile::tempdir().unwrap();
        let out = Command::new(bin())
            .current_dir(tmp.path())
            .args(["init", name, "--base-url", base_url])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let root = tmp.path().join("twins").join(name);
        DemoTwin { tmp, root }
    }

    /// Copied and synthesized with `wraith synth`.
    pub fn synthesized() -> DemoTwin {
        let t = DemoTwin::copy();
        t.synth();
        t
    }

    pub fn synth(&self) {
        let out = self.run(&["synth"]);
        assert!(
            out.status.success(),
            "synth failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    pub fn path_str(&self) -> String {
        self.root.to_string_lossy().into_owned()
    }

    /// `wraith <cmd> <twin> <args>`.
    pub fn run(&self, cmd_and_args: &[&str]) -> Output {
        let (cmd, rest) = cmd_and_args.split_first().unwrap();
        Command::new(bin())
            .arg(cmd)
            .arg(&self.root)
            .args(rest)
            .env("WRAITH_HMAC_KEY", "check-tests-key")
            .output()
            .unwrap()
    }

    /// Write `har` as `<name>.har` in the twin's temp dir and `wraith import` it; panics with
    /// the importer's stderr when it fails.
    pub fn import_har(&self, name: &str, har: &Value) {
        let path = self.tmp.path().join(format!("{name}.har"));
        std::fs::write(&path, har.to_string()).unwrap();
        let out = self.run(&["import", &path.to_string_lossy()]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    pub fn model_path(&self) -> PathBuf {
        self.root.join("model/twin.wir.json")
    }

    pub fn model(&self) -> Value {
        serde_json::from_str(&std::fs::read_to_string(self.model_path()).unwrap()).unwrap()
    }

    pub fn write_model(&self, v: &Value) {
        std::fs::write(
            self.model_path(),
            wraith_model::to_canonical_json(v).unwrap(),
        )
        .unwrap();
    }

    /// Drop the model's routes at `path` (every method): their recorded exchanges are then
    /// answered with the twin's route-miss refusal.
    pub fn drop_route(&self, path: &str) {
        let mut model = self.model();
        model["routes"]
            .as_array_mut()
            .unwrap()
            .retain(|r| r["path"] != path);
        self.write_model(&model);
    }

    /// Duplicate the recorded session under `n` more session ids (`…-copy<i>`), so a twin has
    /// several sessions to hold out.
    pub fn add_session_copies(&self, n: usize) {
        let sessions = self.root.join("recordings/sessions");
        let first = std::fs::read_dir(&sessions)
            .unwrap()
            .next()
            .unwrap()
            .unwrap();
        let id = first.file_name().to_string_lossy().into_owned();
        for i in 0..n {
            let new_id = format!("{id}-copy{i}");
            let dest = sessions.join(&new_id);
            copy_dir(&first.path(), &dest);
            let mpath = dest.join("manifest.json");
            let mut m: Value =
                serde_json::from_str(&std::fs::read_to_string(&mpath).unwrap()).unwrap();
            m["session_id"] = Value::String(new_id);
            std::fs::write(&mpath, wraith_model::to_canonical_json(&m).unwrap()).unwrap();
        }
    }

    /// Start `wraith serve` on a free port; returns the child and its base URL.
    pub fn serve(&self) -> (Child, String) {
        serve_twin(&self.root, &self.tmp.path().join("ready.json"))
    }
}

pub fn stdout_json(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not JSON ({e}): {}\nstderr: {}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

/// Start `wraith serve <root>` on a free port, its ready file at `ready`; returns the child and
/// its base URL once the ready file names it.
pub fn serve_twin(root: &Path, ready: &Path) -> (Child, String) {
    serve_twin_with(root, ready, &[])
}

/// [`serve_twin`] with more `wraith serve` arguments.
pub fn serve_twin_with(root: &Path, ready: &Path, args: &[&str]) -> (Child, String) {
    let mut child = Command::new(bin())
        .arg("serve")
        .arg(root)
        .args(["--port", "0", "--ready-json"])
        .arg(ready)
        .args(args)
        .env("WRAITH_HMAC_KEY", "check-tests-key")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    for _ in 0..600 {
        if let Ok(text) = std::fs::read_to_string(ready)
            && let Ok(v) = serde_json::from_str::<Value>(&text)
            && let Some(url) = v["serve"]["url"].as_str()
        {
            return (child, url.to_string());
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
    panic!("wraith serve did not become ready");
}

/// `GET url` (`http://host:port/path`) over a plain TCP connection: the answer's head (status
/// line and headers) and its body, de-chunked.
pub fn http_get(url: &str) -> (String, String) {
    use std::io::{Read, Write};
    let rest = url.strip_prefix("http://").unwrap();
    let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
    let mut s = std::net::TcpStream::connect(authority).unwrap();
    write!(
        s,
        "GET /{path} HTTP/1.1\r\nHost: {authority}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut buf = String::new();
    s.read_to_string(&mut buf).unwrap();
    let (head, body) = buf.split_once("\r\n\r\n").unwrap();
    let body = if head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked")
    {
        dechunk(body)
    } else {
        body.to_string()
    };
    (head.to_string(), body)
}

fn dechunk(mut body: &str) -> String {
    let mut out = String::new();
    loop {
        let (size, rest) = body.split_once("\r\n").unwrap();
        let n = usize::from_str_radix(size.trim(), 16).unwrap();
        if n == 0 {
            return out;
        }
        out.push_str(&rest[..n]);
        body = &rest[n + 2..];
    }
}
