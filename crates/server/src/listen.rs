//! Where the twin listens: parsing `--listen`, the default dual-stack loopback pair, binding, and
//! the loopback test that decides whether the control plane needs a token.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use tokio::net::TcpListener;

use crate::ServerError;

/// What the user asked to listen on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ListenSpec {
    /// No `--listen`: `127.0.0.1:<port>` and, best effort, `[::1]` on the same port.
    DefaultLoopback { port: u16 },
    /// `--listen ADDR`: a literal socket address (`127.0.0.1:8181`, `[::1]:8181`, `0.0.0.0:0`).
    Addr(SocketAddr),
    /// `--listen HOST:PORT` with a host name, resolved at bind time (every address it resolves
    /// to is bound; the first one must succeed).
    Host { host: String, port: u16 },
}

impl ListenSpec {
    /// Parse a `--listen` value. `default_port` fills in a missing port (`--listen ::1` or
    /// `--listen 127.0.0.1` with `--port`).
    pub fn parse(value: &str, default_port: u16) -> Result<ListenSpec, ServerError> {
        let v = value.trim();
        let bad = |reason: &str| ServerError::BadListen {
            value: value.to_string(),
            reason: reason.to_string(),
        };
        if v.is_empty() {
            return Err(bad("it is empty"));
        }
        if let Ok(addr) = v.parse::<SocketAddr>() {
            return Ok(ListenSpec::Addr(addr));
        }
        if let Ok(ip) = v.parse::<IpAddr>() {
            return Ok(ListenSpec::Addr(SocketAddr::new(ip, default_port)));
        }
        // `[::1]` without a port.
        if let Some(inner) = v.strip_prefix('[').and_then(|s| s.strip_suffix(']'))
            && let Ok(ip) = inner.parse::<Ipv6Addr>()
        {
            return Ok(ListenSpec::Addr(SocketAddr::new(
                IpAddr::V6(ip),
                default_port,
            )));
        }
        let (host, port) = match v.rsplit_once(':') {
            Some((h, p)) if !h.contains(':') => {
                let port = p
                    .parse::<u16>()
                    .map_err(|_| bad("the port after ':' must be a number from 0 to 65535"))?;
                (h, port)
            }
            Some(_) => {
                return Err(bad(
                    "an IPv6 address with a port must be bracketed, e.g. [::1]:8181",
                ));
            }
            None => (v, default_port),
        };
        if host.is_empty()
            || !host
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '.')
        {
            return Err(bad(
                "expected host:port, an IP address, or a bracketed IPv6 address such as [::1]:8181",
            ));
        }
        Ok(ListenSpec::Host {
            host: host.to_string(),
            port,
        })
    }

    /// The addresses to bind, primary first. Host names are resolved here (IPv4 first).
    pub async fn resolve(&self) -> Result<Vec<SocketAddr>, ServerError> {
        Ok(match self {
            ListenSpec::DefaultLoopback { port } => vec![
                SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), *port),
                SocketAddr::new(IpAddr::V6(Ipv6Addr::LOCALHOST), *port),
            ],
            ListenSpec::Addr(a) => vec![*a],
            ListenSpec::Host { host, port } => {
                let mut out: Vec<SocketAddr> = Vec::new();
                let found = tokio::net::lookup_host((host.as_str(), *port))
                    .await
                    .map_err(|e| ServerError::BadListen {
                        value: format!("{host}:{port}"),
                        reason: format!("the host name does not resolve: {e}"),
                    })?;
                for a in found {
                    if !out.contains(&a) {
                        out.push(a);
                    }
                }
                out.sort_by_key(|a| a.is_ipv6());
                if out.is_empty() {
                    return Err(ServerError::BadListen {
                        value: format!("{host}:{port}"),
                        reason: "the host name resolves to no address".to_string(),
                    });
                }
                out
            }
        })
    }
}

/// True when every address is a loopback address: only then may the control plane answer
/// without a token. An IPv4-mapped IPv6 address (`::ffff:127.0.0.1`) is the IPv4 address it
/// maps, which `Ipv6Addr::is_loopback` alone does not say.
pub fn all_loopback(addrs: &[SocketAddr]) -> bool {
    !addrs.is_empty() && addrs.iter().all(|a| a.ip().to_canonical().is_loopback())
}

/// Bound listeners, ready to serve.
#[derive(Debug)]
pub struct Listeners {
    pub(crate) listeners: Vec<TcpListener>,
    addrs: Vec<SocketAddr>,
    warnings: Vec<String>,
}

impl Listeners {
    /// Every bound address, the primary one first (the one `url()` names).
    pub fn local_addrs(&self) -> &[SocketAddr] {
        &self.addrs
    }

    /// The port of the primary address (the real one when `--port 0` was asked for).
    pub fn port(&self) -> u16 {
        self.addrs.first().map(SocketAddr::port).unwrap_or(0)
    }

    /// `http://<primary address>`: `http://127.0.0.1:PORT` on the default bind. A wildcard bind
    /// (`0.0.0.0`, `::`) is not an address a client can dial, so its URL names the loopback
    /// address of the same family, which the wildcard also serves.
    pub fn url(&self) -> String {
        match self.addrs.first() {
            Some(a) => {
                let mut a = *a;
                if a.ip().is_unspecified() {
                    a.set_ip(match a.ip() {
                        IpAddr::V4(_) => IpAddr::V4(Ipv4Addr::LOCALHOST),
                        IpAddr::V6(_) => IpAddr::V6(Ipv6Addr::LOCALHOST),
                    });
                }
                format!("http://{a}")
            }
            None => String::new(),
        }
    }

    /// Binding problems that did not stop the server (the `::1` half of the default pair).
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// Bind `candidates` (from [`ListenSpec::resolve`]). The first address must bind; the others
    /// are best effort and a failure becomes a warning (the default `::1` half, extra resolved
    /// addresses). Decide the control-token policy with [`all_loopback`] *before* calling this.
    pub async fn bind(candidates: &[SocketAddr]) -> Result<Listeners, ServerError> {
        let mut listeners = Vec::new();
        let mut addrs = Vec::new();
        let mut warnings = Vec::new();
        for (i, mut want) in candidates.iter().copied().enumerate() {
            if i > 0 && want.port() == 0 {
                // Same port on every address, so one URL works for both families.
                want.set_port(addrs.first().map(SocketAddr::port).unwrap_or(0));
            }
            match TcpListener::bind(want).await {
                Ok(l) => {
                    let got = l.local_addr().map_err(|e| ServerError::Bind {
                        addr: want,
                        source: e,
                        holder: None,
                    })?;
                    addrs.push(got);
                    listeners.push(l);
                }
                Err(e) if i == 0 => {
                    let holder = if e.kind() == std::io::ErrorKind::AddrInUse {
                        crate::port_holder::describe(want.port())
                    } else {
                        None
                    };
                    return Err(ServerError::Bind {
                        addr: want,
                        source: e,
                        holder,
                    });
                }
                Err(e) => warnings.push(format!(
                    "could not also listen on {want}: {e} (serving on {} only)",
                    addrs
                        .iter()
                        .map(ToString::to_string)
                        .collect::<Vec<_>>()
                        .join(", ")
                )),
            }
        }
        Ok(Listeners {
            listeners,
            addrs,
            warnings,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listen_accepts_ipv4_ipv6_and_host_forms() {
        assert_eq!(
            ListenSpec::parse("127.0.0.1:8181", 1).ok(),
            Some(ListenSpec::Addr("127.0.0.1:8181".parse().unwrap()))
        );
        assert_eq!(
            ListenSpec::parse("[::1]:8181", 1).ok(),
            Some(ListenSpec::Addr("[::1]:8181".parse().unwrap()))
        );
        assert_eq!(
            ListenSpec::parse("[::1]", 9).ok(),
            Some(ListenSpec::Addr("[::1]:9".parse().unwrap()))
        );
        assert_eq!(
            ListenSpec::parse("::1", 9).ok(),
            Some(ListenSpec::Addr("[::1]:9".parse().unwrap()))
        );
        assert_eq!(
            ListenSpec::parse("0.0.0.0", 7).ok(),
            Some(ListenSpec::Addr("0.0.0.0:7".parse().unwrap()))
        );
        assert_eq!(
            ListenSpec::parse("localhost:80", 1).ok(),
            Some(ListenSpec::Host {
                host: "localhost".into(),
                port: 80
            })
        );
        assert_eq!(
            ListenSpec::parse("localhost", 5).ok(),
            Some(ListenSpec::Host {
                host: "localhost".into(),
                port: 5
            })
        );
    }

    #[test]
    fn listen_rejects_malformed_values_with_a_reason() {
        for bad in [
            "",
            "host:port",
            "[::1]:x",
            "a b:1",
            "127.0.0.1:99999",
            "fe80::1%eth0:80",
        ] {
            let err = ListenSpec::parse(bad, 1).expect_err(bad);
            assert!(err.to_string().contains("--listen"), "{err}");
        }
    }

    #[tokio::test]
    async fn default_bind_uses_one_port_for_both_loopback_families() {
        let addrs = ListenSpec::DefaultLoopback { port: 0 }
            .resolve()
            .await
            .unwrap();
        assert!(all_loopback(&addrs));
        let l = Listeners::bind(&addrs).await.unwrap();
        assert!(l.port() != 0);
        assert_eq!(l.url(), format!("http://127.0.0.1:{}", l.port()));
        assert!(l.local_addrs().iter().all(|a| a.port() == l.port()));
    }

    #[test]
    fn only_all_loopback_addresses_count_as_loopback() {
        let v4: SocketAddr = "127.0.0.1:1".parse().unwrap();
        let v6: SocketAddr = "[::1]:1".parse().unwrap();
        let any: SocketAddr = "0.0.0.0:1".parse().unwrap();
        let lan: SocketAddr = "192.0.2.7:1".parse().unwrap();
        assert!(all_loopback(&[v4, v6]));
        let mapped: SocketAddr = "[::ffff:127.0.0.1]:1".parse().unwrap();
        let mapped_lan: SocketAddr = "[::ffff:192.0.2.7]:1".parse().unwrap();
        assert!(all_loopback(&[mapped]));
        assert!(!all_loopback(&[mapped_lan]));
        assert!(!all_loopback(&[v4, any]));
        assert!(!all_loopback(&[lan]));
        assert!(!all_loopback(&[]));
    }
}
