//! How a client reaches the recorder (`--mode`, `[proxy] mode`).
//!
//! - **reverse**: the client is pointed at the proxy's URL instead of the API's base URL and
//!   sends origin-form requests (`GET /regions`); each is sent to the base URL with its path
//!   prefix in front.
//! - **forward**: the client keeps the API's URL and uses the recorder as its HTTP proxy
//!   (`HTTP_PROXY`). Requests arrive in absolute form (`GET http://api.example.com/v4/regions`);
//!   those addressed to the base URL's host and under its path are sent to the upstream (over
//!   TLS when the base URL is `https`) and recorded, everything else passes through unrecorded.
//!   HTTPS to the upstream's host travels inside a `CONNECT` tunnel that cannot be read, so
//!   that tunnel is refused (403) with a pointer to `mitm`; tunnels to other hosts pass through.
//! - **mitm**: forward, and a `CONNECT` to the upstream's host is answered by the recorder
//!   itself over TLS, with a certificate for that host signed by a CA made for this run
//!   ([`crate::intercept`]); the requests inside are recorded as in forward mode.
//!
//! Origin-form requests are handled as in reverse mode whatever the mode, so a client pointed
//! at the proxy's URL keeps working, and so does the control plane.

/// See the module documentation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ProxyMode {
    #[default]
    Reverse,
    Forward,
    Mitm,
}

impl ProxyMode {
    /// The name written into session manifests (`proxy_mode`) and shown by `/__wraith/info`.
    pub fn as_str(self) -> &'static str {
        match self {
            ProxyMode::Reverse => "reverse",
            ProxyMode::Forward => "forward",
            ProxyMode::Mitm => "mitm",
        }
    }

    /// Whether the client uses the recorder as its proxy (absolute-form requests, `CONNECT`).
    pub fn is_forward(self) -> bool {
        !matches!(self, ProxyMode::Reverse)
    }
}
