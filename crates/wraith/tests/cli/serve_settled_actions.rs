//! `wraith serve` applying what an action answering `{}` did to the record its path names, as
//! the reads after it showed: compared with the session's latest view before the action,
//! whichever route answered that view. Black-box: the real binary on HAR runs written here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::{Value, json};
use support::{Twin, har};

const ORIGIN: &str = "https://api.servers.test";

fn server_record(id: &str, label: &str, status: &str) -> Value {
    json!({"id": id, "label": label, "status": status})
}

/// One recorded run's server: its id, label and path.
struct RunServer {
    id: &'static str,
    label: String,
    path: String,
}

impl RunServer {
    /// The create of this server, answered with `record`.
    fn create(&self, record: &Value) -> Value {
        let sent = json!({"label": self.label});
        har::entry(ORIGIN, "POST", "/v1/servers", Some(&sent), record)
    }

    /// A read of this server, answered with `record`.
    fn read(&self, record: &Value) -> Value {
        har::entry(ORIGIN, "GET", &self.path, None, record)
    }

    /// Action `what` on this server, answered `{}`.
    fn act(&self, what: &str) -> Value {
        let path = format!("{}/{what}", self.path);
        har::entry(ORIGIN, "POST", &path, None, &json!({}))
    }
}

/// Three runs, each on its own server, the entries of each from `run`; one HAR file per run,
/// each entry stamped on its run's day.
fn twin_of(run: impl Fn(&str, &RunServer) -> Vec<Value>) -> Twin {
    let runs = [("a", "101"), ("b", "202"), ("c", "303")]
        .into_iter()
        .map(|(name, id)| {
            let server = RunServer {
                id,
                label: format!("srv-{name}"),
                path: format!("/v1/servers/{id}"),
            };
            run(name, &server)
        })
        .collect();
    har::runs_twin("servers", ORIGIN, runs)
}

/// Each run creates a server (`active`), reads and renames it, suspends it (the next read
/// shows `suspended`) and asks to resume it (the one read after that still shows `suspended`:
/// the resume had not taken effect yet).
fn suspend_resume_twin() -> Twin {
    twin_of(|_, srv| {
        let renamed = format!("{}-2", srv.label);
        let as_renamed = |status: &str| server_record(srv.id, &renamed, status);
        vec![
            srv.create(&server_record(srv.id, &srv.label, "active")),
            srv.read(&server_record(srv.id, &srv.label, "active")),
            har::entry(
                ORIGIN,
                "PUT",
                &srv.path,
                Some(&json!({"label": renamed})),
                &as_renamed("active"),
            ),
            srv.act("suspend"),
            srv.read(&as_renamed("suspended")),
            srv.act("resume"),
            srv.read(&as_renamed("suspended")),
        ]
    })
}

/// A session on a served twin.
struct Session<'a> {
    server: &'a support::Server,
    name: Option<&'a str>,
}

impl<'a> Session<'a> {
    /// The one session each test runs in.
    fn agent(server: &'a support::Server) -> Self {
        Session {
            server,
            name: Some("agent"),
        }
    }

    /// Create a server labelled `label`; its id.
    async fn create(&self, label: &str) -> String {
        let created = self
            .server
            .post("/v1/servers", self.name, json!({"label": label}))
            .await;
        created.assert_status(200);
        created.json()["id"].as_str().unwrap().to_string()
    }

    /// Action `what` on server `id`, which must succeed.
    async fn act(&self, id: &str, what: &str) {
        let path = format!("/v1/servers/{id}/{what}");
        let answer = self.server.post(&path, self.name, json!({})).await;
        answer.assert_status(200);
    }

    async fn record(&self, id: &str) -> Value {
        let read = self
            .server
            .get(&format!("/v1/servers/{id}"), self.name)
            .await;
        read.assert_status(200);
        read.json()
    }

    async fn status(&self, id: &str) -> Value {
        self.record(id).await["status"].clone()
    }
}

#[tokio::test]
async fn a_bodiless_action_is_compared_with_the_latest_read_before_it_not_an_earlier_update() {
    let t = suspend_resume_twin();
    let server = t.serve(&[]);
    let s = Session::agent(&server);
    let id = s.create("mine").await;
    s.act(&id, "suspend").await;
    assert_eq!(s.status(&id).await, "suspended");
    // Every recorded resume left the server as the read before it showed it: resuming a
    // server that is not suspended leaves it alone, and never suspends it.
    let other = s.create("other").await;
    s.act(&other, "resume").await;
    assert_eq!(s.status(&other).await, "active");
}

/// Each run creates a server (`provisioning`) and boots it. The first run's one read after
/// the boot shows it `running`, then it shuts the server down (`offline`); the other two poll
/// it through `provisioning` and `booting` to `running`.
fn power_twin() -> Twin {
    twin_of(|name, srv| {
        let read = |status: &str| srv.read(&server_record(srv.id, &srv.label, status));
        let mut entries = vec![
            srv.create(&server_record(srv.id, &srv.label, "provisioning")),
            srv.act("boot"),
        ];
        if name == "a" {
            entries.extend([read("running"), srv.act("shutdown"), read("offline")]);
        } else {
            entries.extend(["provisioning", "booting", "running"].map(read));
        }
        entries
    })
}

#[tokio::test]
async fn a_boot_leaves_the_server_running_as_every_recorded_poll_ended() {
    let t = power_twin();
    let server = t.serve(&[]);
    let s = Session::agent(&server);
    let id = s.create("mine").await;
    s.act(&id, "boot").await;
    assert_eq!(s.status(&id).await, "running");
    s.act(&id, "shutdown").await;
    assert_eq!(s.status(&id).await, "offline");
    // Booted again after the shutdown: running again, not left `offline`.
    s.act(&id, "boot").await;
    assert_eq!(s.status(&id).await, "running");
}

/// Each run creates a server without backups, enables them (the read after shows
/// `backups.enabled` and its schedule set) and cancels them (`enabled` false again, the
/// schedule kept).
fn backups_twin() -> Twin {
    twin_of(|_, srv| {
        let with_backups = |enabled: bool, day: Value| {
            let mut r = server_record(srv.id, &srv.label, "running");
            r["backups"] = json!({"enabled": enabled, "schedule": {"day": day, "hour": 2}});
            r
        };
        vec![
            srv.create(&with_backups(false, Value::Null)),
            srv.act("backups/enable"),
            srv.read(&with_backups(true, json!("Sunday"))),
            srv.act("backups/cancel"),
            srv.read(&with_backups(false, json!("Sunday"))),
        ]
    })
}

#[tokio::test]
async fn an_action_sets_the_nested_fields_it_changed_and_keeps_the_others() {
    let t = backups_twin();
    let server = t.serve(&[]);
    let s = Session::agent(&server);
    let id = s.create("mine").await;
    s.act(&id, "backups/enable").await;
    let enabled = s.record(&id).await;
    assert_eq!(
        enabled["backups"],
        json!({"enabled": true, "schedule": {"day": "Sunday", "hour": 2}}),
        "{enabled}"
    );
    assert_eq!(enabled["label"], "mine", "{enabled}");
    s.act(&id, "backups/cancel").await;
    let cancelled = s.record(&id).await;
    assert_eq!(cancelled["backups"]["enabled"], false, "{cancelled}");
    assert_eq!(
        cancelled["backups"]["schedule"]["day"], "Sunday",
        "{cancelled}"
    );
}
