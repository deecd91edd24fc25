//! The machine-readable startup contract (`--ready-json`) and `GET /__wraith/info`.
//!
//! Both carry the same freshness fields (`twin_age_seconds`, `recorded_at`, `synthesized_at`,
//! `drifted_routes`) so agents and CI can read freshness without parsing response headers.
//! `drifted_routes` comes from the model: synth measures drift between recording runs
//! (`Route::drift`), this wraith has no refresh against the live upstream.

use serde::Serialize;
use serde_json::{Map, Value, json};

use crate::listen::Listeners;

/// The served twin, as the startup contract and `/__wraith/info` describe it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct TwinInfo {
    /// The twin's name (`[service] name`).
    pub twin: String,
    /// Whole seconds between the newest recording (else the model's `recorded_at`) and server
    /// startup. Computed once; it does not tick.
    pub twin_age_seconds: u64,
    /// RFC 3339 UTC time of the newest recording; omitted when the twin has none.
    pub recorded_at: Option<String>,
    /// RFC 3339 UTC time `model/twin.wir.json` was written.
    pub synthesized_at: Option<String>,
    /// `METHOD /path` of every route whose newest recording run answered in another shape
    /// than its earlier recordings (the model's `Route::drift`), sorted; see
    /// [`drifted_routes`].
    pub drifted_routes: Vec<String>,
    /// Startup warnings and advice (engine, configuration, binding).
    pub warnings: Vec<String>,
    /// `--debug`: the session state dump endpoint is available.
    pub debug: bool,
    /// `--trace`: the trace endpoints answer (without it they answer 404 `trace-disabled`).
    pub trace: bool,
}

/// The names of the model's drifted routes (a non-empty `Route::drift`), sorted and without
/// repeats: what `drifted_routes` lists. A name is the check report's (`Route::label`):
/// `METHOD /path`, with ` on <origin>` for a route of another host than the base URL.
pub fn drifted_routes(model: &wraith_model::Model) -> Vec<String> {
    model.drifted_route_names()
}

/// Paths of the control endpoints, as advertised to clients: every endpoint
/// [`crate::control::route`] answers (`{id}` stands for a session id, or a trace entry's).
/// Whether the debug-only and trace endpoints answer is in `capabilities`.
pub fn control_paths() -> Value {
    json!({
        "health": "/__wraith/health",
        "ready": "/__wraith/ready",
        "info": "/__wraith/info",
        "session": "/__wraith/session",
        "session_reset": "/__wraith/session/{id}/reset",
        "session_delete": "/__wraith/session/{id}",
        "session_state": "/__wraith/session/{id}/state",
        "session_probe": "/__wraith/session/{id}/probe",
        "reset": "/__wraith/reset",
        "trace_log": "/__wraith/trace/log",
        "trace_entry": "/__wraith/trace/{id}",
        "trace_reset": "/__wraith/trace/reset",
    })
}

fn freshness_into(map: &mut Map<String, Value>, info: &TwinInfo) {
    map.insert("twin_age_seconds".into(), json!(info.twin_age_seconds));
    if let Some(r) = &info.recorded_at {
        map.insert("recorded_at".into(), json!(r));
    }
    if let Some(s) = &info.synthesized_at {
        map.insert("synthesized_at".into(), json!(s));
    }
    map.insert("drifted_routes".into(), json!(info.drifted_routes));
}

/// The `--ready-json` document, written once the listeners are bound.
pub fn ready_document(listeners: &Listeners, info: &TwinInfo) -> Value {
    let mut map = Map::new();
    map.insert(
        "serve".into(),
        json!({
            "url": listeners.url(),
            "wraith_session_header": "X-Wraith-Session",
            "port": listeners.port(),
            "listen": listeners
                .local_addrs()
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>(),
        }),
    );
    map.insert("twin".into(), json!(info.twin));
    freshness_into(&mut map, info);
    map.insert("control".into(), control_paths());
    map.insert(
        "capabilities".into(),
        json!({"session_provisioning": true, "session_state": info.debug, "trace": info.trace}),
    );
    map.insert("warnings".into(), json!(info.warnings));
    Value::Object(map)
}

/// The `GET /__wraith/info` body.
pub fn info_document(info: &TwinInfo, routes: usize, sessions: usize) -> Value {
    let mut map = Map::new();
    map.insert("twin".into(), json!(info.twin));
    map.insert("routes".into(), json!(routes));
    map.insert("sessions".into(), json!(sessions));
    freshness_into(&mut map, info);
    map.insert("wraith_session_header".into(), json!("X-Wraith-Session"));
    map.insert("warnings".into(), json!(info.warnings));
    Value::Object(map)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::control::{ControlRoute, route};

    /// Every advertised path names an endpoint the control plane routes (some method of it),
    /// and every endpoint the control plane routes is advertised.
    #[test]
    fn the_control_map_lists_every_endpoint_the_control_plane_routes() {
        let routed = |path: &str| {
            ["GET", "POST", "DELETE"].iter().find_map(|m| {
                let r = route(m, path);
                (!matches!(
                    r,
                    ControlRoute::NotFound | ControlRoute::MethodNotAllowed { .. }
                ))
                .then_some(r)
            })
        };
        let map = control_paths();
        let mut hit = Vec::new();
        for (key, path) in map.as_object().unwrap() {
            let path = path.as_str().unwrap().replace("{id}", "1");
            let r = routed(&path).unwrap_or_else(|| panic!("{key}: {path} is not routed"));
            hit.push(std::mem::discriminant(&r));
            // `session` is provisioning (POST) besides the listing (GET).
            if key == "session" {
                hit.push(std::mem::discriminant(&route("POST", &path)));
            }
        }
        let every = [
            ControlRoute::Health,
            ControlRoute::Ready,
            ControlRoute::Info,
            ControlRoute::Provision,
            ControlRoute::ListSessions,
            ControlRoute::ResetSession(String::new()),
            ControlRoute::DeleteSession(String::new()),
            ControlRoute::SessionState(String::new()),
            ControlRoute::ProbeSession(String::new()),
            ControlRoute::ResetAll,
            ControlRoute::TraceLog,
            ControlRoute::TraceGet(None),
            ControlRoute::TraceReset,
        ];
        // A new endpoint does not compile here until it is listed above (and advertised).
        let _listed_above = |r: &ControlRoute| match r {
            ControlRoute::Health
            | ControlRoute::Ready
            | ControlRoute::Info
            | ControlRoute::Provision
            | ControlRoute::ListSessions
            | ControlRoute::ResetSession(_)
            | ControlRoute::DeleteSession(_)
            | ControlRoute::SessionState(_)
            | ControlRoute::ProbeSession(_)
            | ControlRoute::ResetAll
            | ControlRoute::TraceLog
            | ControlRoute::TraceGet(_)
            | ControlRoute::TraceReset => true,
            ControlRoute::MethodNotAllowed { .. }
            | ControlRoute::NotFound
            | ControlRoute::BadSessionId(_) => false,
        };
        for r in every {
            assert!(
                hit.contains(&std::mem::discriminant(&r)),
                "{r:?} is not advertised"
            );
        }
    }

    #[test]
    fn info_omits_recorded_at_when_there_are_no_recordings() {
        let info = TwinInfo {
            twin: "t".into(),
            twin_age_seconds: 5,
            synthesized_at: Some("2026-01-01T00:00:00Z".into()),
            ..TwinInfo::default()
        };
        let v = info_document(&info, 3, 1);
        assert!(v.get("recorded_at").is_none());
        assert_eq!(v["routes"], 3);
        assert_eq!(v["sessions"], 1);
        assert_eq!(v["drifted_routes"], json!([]));
        assert_eq!(v["synthesized_at"], "2026-01-01T00:00:00Z");
    }
}
