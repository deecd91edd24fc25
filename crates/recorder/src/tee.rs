//! The response body tee: every frame from the upstream goes to the client as soon as it
//! arrives, and a copy of its data is kept for the recording. When the body ends (or is cut
//! short), the copy is handed to the [`PendingExchange`] that persists it.

use std::pin::Pin;
use std::task::{Context, Poll, ready};

use bytes::Bytes;
use hyper::body::{Body, Frame, Incoming, SizeHint};

use crate::exchange::{CapturedBody, PendingExchange};
use crate::headers::recorded_trailers;
use crate::now_us;

/// A response body that streams `inner` to the client and records a copy.
pub(crate) struct TeeBody {
    inner: Incoming,
    /// `Some` until the capture has been handed off (at end of stream, error or drop).
    capture: Option<Capture>,
}

struct Capture {
    pending: PendingExchange,
    body: Vec<u8>,
    /// Bytes beyond this are streamed but not recorded; the exchange is then marked truncated.
    limit: usize,
    over_limit: bool,
    first_data_us: Option<u64>,
    trailers: Option<wraith_recording::Headers>,
}

impl TeeBody {
    pub(crate) fn new(inner: Incoming, pending: PendingExchange, limit: usize) -> TeeBody {
        // A declared length is reserved at once (up to the limit): growing the copy by
        // doubling would hold up to twice a large body while it streams.
        let declared = inner
            .size_hint()
            .exact()
            .and_then(|n| usize::try_from(n).ok())
            .map_or(0, |n| n.min(limit));
        TeeBody {
            inner,
            capture: Some(Capture {
                pending,
                body: Vec::with_capacity(declared),
                limit,
                over_limit: false,
                first_data_us: None,
                trailers: None,
            }),
        }
    }

    /// Hand the captured body off for persistence. `complete` is false when the stream did not
    /// reach its end (upstream error, client gone, shutdown).
    fn finish(&mut self, complete: bool) {
        if let Some(c) = self.capture.take() {
            let captured = CapturedBody {
                truncated: !complete || c.over_limit,
                over_limit: c.over_limit,
                first_data_us: c.first_data_us,
                last_byte_us: now_us(),
                body: c.body,
                trailers: c.trailers,
            };
            c.pending.complete(captured);
        }
    }
}

impl Capture {
    fn push(&mut self, data: &Bytes) {
        if self.first_data_us.is_none() && !data.is_empty() {
            self.first_data_us = Some(now_us());
        }
        let room = self.limit.saturating_sub(self.body.len());
        if data.len() > room {
            self.body.extend_from_slice(&data[..room]);
            self.over_limit = true;
        } else {
            self.body.extend_from_slice(data);
        }
    }
}

impl Body for TeeBody {
    type Data = Bytes;
    type Error = hyper::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, hyper::Error>>> {
        // `Incoming` is `Unpin`, so it can be polled in place.
        let polled = ready!(Pin::new(&mut self.inner).poll_frame(cx));
        match polled {
            Some(Ok(frame)) => {
                if let (Some(data), Some(c)) = (frame.data_ref(), self.capture.as_mut()) {
                    c.push(data);
                }
                // Trailers are the last frame a body has: the body is whole, though the
                // client's side may drop the body without polling for its end.
                let trailers = frame.trailers_ref().map(recorded_trailers);
                if let (Some(t), Some(c)) = (trailers.clone(), self.capture.as_mut()) {
                    c.trailers = Some(t);
                }
                if trailers.is_some() || self.inner.is_end_stream() {
                    self.finish(true);
                }
                Poll::Ready(Some(Ok(frame)))
            }
            Some(Err(e)) => {
                self.finish(false);
                Poll::Ready(Some(Err(e)))
            }
            None => {
                self.finish(true);
                Poll::Ready(None)
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

impl Drop for TeeBody {
    fn drop(&mut self) {
        // hyper does not poll a body that says it is already at its end (HEAD, 204, empty
        // bodies); that is a complete exchange, not a cut one.
        let complete = self.inner.is_end_stream();
        self.finish(complete);
    }
}
