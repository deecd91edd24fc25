//! Deadlines on a connection's silences: its first bytes, and the answer it leaves unread.
//!
//! hyper's `header_read_timeout` starts once a request has begun; before that, the automatic
//! HTTP/1-or-HTTP/2 detection waits for the first bytes for as long as the client likes. A
//! client that connects and sends nothing would hold its socket (and a file descriptor) for
//! ever, and enough of them stop the twin accepting anyone. [`IdleDeadlines`] fails the
//! connection's reads once the deadline passes before its opening is read: its first byte, or,
//! for a client that begins the HTTP/2 preface (`PRI * HTTP/2.0…`), the whole preface, since
//! the detection waits for all of it with no timer either. After that, reads are a plain
//! pass-through, so an idle keep-alive is left to hyper's own timers.
//!
//! hyper has no timer on writing an answer either: a client that asks for a large answer and
//! never reads it keeps the connection, and the whole answer in memory, for as long as it
//! stays connected, and forty such clients held a gigabyte. So a write that makes no progress
//! for the same deadline fails the connection too. Any byte taken by the peer restarts that
//! clock: a slow reader is served whole, only a stalled one is cut.

use std::future::Future as _;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::Sleep;

/// The HTTP/2 connection preface (RFC 9113 §3.4), which hyper's protocol detection reads whole.
const H2_PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

/// `inner` with reads failing (`TimedOut`) when the connection's opening has not arrived within
/// the deadline, and writes failing when the peer has taken no byte of them for as long.
pub struct IdleDeadlines<T> {
    inner: T,
    /// `Some` until the opening is read: the first byte, or the HTTP/2 preface it begins.
    first_byte: Option<Pin<Box<Sleep>>>,
    /// How many bytes of [`H2_PREFACE`] the connection has sent so far.
    preface_seen: usize,
    within: Duration,
    /// Armed while a write waits on the peer; cleared by any progress.
    write_stall: Option<Pin<Box<Sleep>>>,
}

impl<T> IdleDeadlines<T> {
    /// Start the clock now: the first byte must arrive within `within`, and later every write
    /// must make progress within as long.
    pub fn new(inner: T, within: Duration) -> IdleDeadlines<T> {
        IdleDeadlines {
            inner,
            first_byte: Some(Box::pin(tokio::time::sleep(within))),
            preface_seen: 0,
            within,
            write_stall: None,
        }
    }

    /// Whether `read`, the next bytes of the connection, completes its opening: any byte that
    /// does not continue the HTTP/2 preface does (an HTTP/1 request, whose head hyper's own
    /// timer bounds), and so does the preface's last.
    fn opening_read(&mut self, read: &[u8]) -> bool {
        for &b in read {
            if H2_PREFACE.get(self.preface_seen) != Some(&b) {
                return true;
            }
            self.preface_seen += 1;
            if self.preface_seen == H2_PREFACE.len() {
                return true;
            }
        }
        false
    }

    /// The outcome of a write poll, under the stall deadline: progress (or an error) disarms
    /// it, a wait arms it and fails once it has passed.
    fn stalled<R>(
        &mut self,
        cx: &mut Context<'_>,
        polled: Poll<io::Result<R>>,
    ) -> Poll<io::Result<R>> {
        if polled.is_ready() {
            self.write_stall = None;
            return polled;
        }
        let within = self.within;
        let stall = self
            .write_stall
            .get_or_insert_with(|| Box::pin(tokio::time::sleep(within)));
        if stall.as_mut().poll(cx).is_ready() {
            self.write_stall = None;
            return Poll::Ready(Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "the client read none of the answer in time",
            )));
        }
        Poll::Pending
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for IdleDeadlines<T> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        let polled = Pin::new(&mut this.inner).poll_read(cx, buf);
        match polled {
            Poll::Ready(Ok(())) if buf.filled().len() > before => {
                if this.first_byte.is_some() && this.opening_read(&buf.filled()[before..]) {
                    this.first_byte = None;
                }
                Poll::Ready(Ok(()))
            }
            Poll::Pending => {
                let expired = this
                    .first_byte
                    .as_mut()
                    .is_some_and(|deadline| deadline.as_mut().poll(cx).is_ready());
                if expired {
                    Poll::Ready(Err(io::Error::new(
                        io::ErrorKind::TimedOut,
                        "no request bytes arrived in time",
                    )))
                } else {
                    Poll::Pending
                }
            }
            other => other,
        }
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for IdleDeadlines<T> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let polled = Pin::new(&mut this.inner).poll_write(cx, buf);
        this.stalled(cx, polled)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let polled = Pin::new(&mut this.inner).poll_flush(cx);
        this.stalled(cx, polled)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let polled = Pin::new(&mut this.inner).poll_write_vectored(cx, bufs);
        this.stalled(cx, polled)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

    #[tokio::test]
    async fn a_silent_peer_times_out_and_a_talking_one_never_does() {
        let (client, server) = tokio::io::duplex(64);
        let mut silent = IdleDeadlines::new(server, Duration::from_millis(100));
        let mut buf = [0u8; 8];
        let err = silent.read(&mut buf).await.unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::TimedOut);
        drop(client);

        let (mut client, server) = tokio::io::duplex(64);
        let mut talking = IdleDeadlines::new(server, Duration::from_millis(100));
        client.write_all(b"G").await.unwrap();
        assert_eq!(talking.read(&mut buf).await.unwrap(), 1);
        // Past the first byte, a long pause is the protocol's business, not this deadline's.
        tokio::time::sleep(Duration::from_millis(300)).await;
        client.write_all(b"ET").await.unwrap();
        assert_eq!(talking.read(&mut buf).await.unwrap(), 2);
    }

    #[tokio::test]
    async fn a_peer_stopping_inside_the_http2_preface_times_out_and_one_past_it_never_does() {
        let mut buf = [0u8; 32];
        for sent in [&b"P"[..], b"PRI * HTTP/2", &H2_PREFACE[..23]] {
            let (mut client, server) = tokio::io::duplex(64);
            let mut stalled = IdleDeadlines::new(server, Duration::from_millis(100));
            client.write_all(sent).await.unwrap();
            let mut got = 0;
            let err = loop {
                match stalled.read(&mut buf).await {
                    Ok(n) => got += n,
                    Err(e) => break e,
                }
            };
            assert_eq!((got, err.kind()), (sent.len(), io::ErrorKind::TimedOut));
        }
        // The whole preface, or a request that only begins like it, is the protocol's business.
        for sent in [H2_PREFACE, b"POST /x HTTP/1.1\r\n", b"PRX"] {
            let (mut client, server) = tokio::io::duplex(64);
            let mut opened = IdleDeadlines::new(server, Duration::from_millis(100));
            client.write_all(sent).await.unwrap();
            let mut got = 0;
            while got < sent.len() {
                got += opened.read(&mut buf).await.unwrap();
            }
            tokio::time::sleep(Duration::from_millis(300)).await;
            client.write_all(b"x").await.unwrap();
            assert_eq!(opened.read(&mut buf).await.unwrap(), 1, "{sent:?}");
        }
    }

    #[tokio::test]
    async fn a_write_the_peer_never_reads_fails_and_a_slow_reader_is_served_whole() {
        let (client, server) = tokio::io::duplex(64);
        let mut stalled = IdleDeadlines::new(server, Duration::from_millis(100));
        let err = stalled.write_all(&[b'x'; 4096]).await.unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::TimedOut);
        drop(client);

        // A reader taking 64 bytes every 60 ms never lets one wait reach 100 ms, however long
        // the whole answer takes.
        let (mut client, server) = tokio::io::duplex(64);
        let mut slow = IdleDeadlines::new(server, Duration::from_millis(100));
        let reader = tokio::spawn(async move {
            let mut got = Vec::new();
            let mut buf = [0u8; 64];
            loop {
                tokio::time::sleep(Duration::from_millis(60)).await;
                match client.read(&mut buf).await.unwrap() {
                    0 => break got,
                    n => got.extend_from_slice(&buf[..n]),
                }
            }
        });
        slow.write_all(&[b'y'; 640]).await.unwrap();
        slow.shutdown().await.unwrap();
        drop(slow);
        assert_eq!(reader.await.unwrap().len(), 640);
    }
}
