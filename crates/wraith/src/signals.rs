//! The signals that stop `serve`, `record` and a `check --wire` run, listened for before any
//! of them says it is ready (or starts its server).
//!
//! A caller waiting for the ready file may signal the moment it appears. Tokio installs a
//! signal's handler when its listener is created, so the listeners are created first: a
//! listener created lazily, when the shutdown future is first polled, leaves a window in which
//! SIGINT still kills the process outright (no drain, no finalized recording).

/// Listeners for SIGINT and SIGTERM (and SIGHUP when asked), registered on creation.
pub(crate) struct ShutdownSignals {
    #[cfg(unix)]
    interrupt: Option<tokio::signal::unix::Signal>,
    #[cfg(unix)]
    terminate: Option<tokio::signal::unix::Signal>,
    #[cfg(unix)]
    hangup: Option<tokio::signal::unix::Signal>,
}

impl ShutdownSignals {
    /// Register the handlers now. Call from inside the Tokio runtime. A listener that cannot be
    /// set up is left out (that signal keeps its default action).
    pub(crate) fn listen(with_hangup: bool) -> ShutdownSignals {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            ShutdownSignals {
                interrupt: signal(SignalKind::interrupt()).ok(),
                terminate: signal(SignalKind::terminate()).ok(),
                hangup: with_hangup
                    .then(|| signal(SignalKind::hangup()).ok())
                    .flatten(),
            }
        }
        #[cfg(not(unix))]
        {
            let _ = with_hangup;
            ShutdownSignals {}
        }
    }

    /// Resolves on the first of the signals listened for, with the exit code a process killed
    /// by it would have had (128 + its number: 130 SIGINT, 143 SIGTERM, 129 SIGHUP).
    pub(crate) async fn recv(self) -> u8 {
        #[cfg(unix)]
        {
            async fn next(s: Option<tokio::signal::unix::Signal>) {
                match s {
                    Some(mut s) => {
                        s.recv().await;
                    }
                    None => std::future::pending().await,
                }
            }
            tokio::select! {
                () = next(self.interrupt) => 130,
                () = next(self.terminate) => 143,
                () = next(self.hangup) => 129,
            }
        }
        #[cfg(not(unix))]
        {
            if tokio::signal::ctrl_c().await.is_err() {
                std::future::pending::<()>().await;
            }
            130
        }
    }
}
