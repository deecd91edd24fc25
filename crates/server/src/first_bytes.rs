//! A deadline on a connection's first bytes.
//!
//! hyper's `header_read_timeout` starts once a request has begun; before that, the automatic
//! HTTP/1-or-HTTP/2 detection waits for the first bytes for as long as the client likes. A
//! client that connects and sends nothing would hold its socket (and a file descriptor) for
//! ever, and enough of them stop the twin accepting anyone. [`FirstBytes`] fails the
//! connection's reads once the deadline passes with nothing read; after the first byte it is a
//! plain pass-through, so a long answer or an idle keep-alive is left to hyper's own timers.

use std::future::Future as _;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::Sleep;

/// `inner` with reads failing (`TimedOut`) when no byte has arrived within the deadline.
pub struct FirstBytes<T> {
    inner: T,
    /// `Some` until the first byte is read.
    deadline: Option<Pin<Box<Sleep>>>,
}

impl<T> FirstBytes<T> {
    /// Start the clock now: the first byte must arrive within `within`.
    pub fn new(inner: T, within: Duration) -> FirstBytes<T> {
        FirstBytes {
            inner,
            deadline: Some(Box::pin(tokio::time::sleep(within))),
        }
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for FirstBytes<T> {
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
                this.deadline = None;
                Poll::Ready(Ok(()))
            }
            Poll::Pending => {
                let expired = this
                    .deadline
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

impl<T: AsyncWrite + Unpin> AsyncWrite for FirstBytes<T> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().inner).poll_write(cx, buf)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().inner).poll_write_vectored(cx, bufs)
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
        let mut silent = FirstBytes::new(server, Duration::from_millis(100));
        let mut buf = [0u8; 8];
        let err = silent.read(&mut buf).await.unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::TimedOut);
        drop(client);

        let (mut client, server) = tokio::io::duplex(64);
        let mut talking = FirstBytes::new(server, Duration::from_millis(100));
        client.write_all(b"G").await.unwrap();
        assert_eq!(talking.read(&mut buf).await.unwrap(), 1);
        // Past the first byte, a long pause is the protocol's business, not this deadline's.
        tokio::time::sleep(Duration::from_millis(300)).await;
        client.write_all(b"ET").await.unwrap();
        assert_eq!(talking.read(&mut buf).await.unwrap(), 2);
    }
}
