//! Assembling the recorded [`Exchange`] from what the proxy saw.

use wraith_recording::{
    Content, Correlation, Decoding, Exchange, Frame, RecordedRequest, RecordedResponse, Safety,
    Timing, decode_message_body,
};

use crate::sessions::Ticket;

/// An exchange whose response headers have arrived and whose body is streaming.
pub(crate) struct PendingExchange {
    pub(crate) ticket: Ticket,
    pub(crate) request: RecordedRequest,
    pub(crate) response: RecordedResponse,
    pub(crate) request_start_us: u64,
    pub(crate) first_byte_us: u64,
}

/// The response body as the tee captured it.
pub(crate) struct CapturedBody {
    pub(crate) body: Vec<u8>,
    /// The body did not reach its end, or was longer than the recording limit.
    pub(crate) truncated: bool,
    /// The body was longer than the recording limit: the client got it whole, the recording
    /// keeps its first `limit` bytes.
    pub(crate) over_limit: bool,
    pub(crate) first_data_us: Option<u64>,
    pub(crate) last_byte_us: u64,
    /// The trailer fields that ended the body, if the upstream sent any.
    pub(crate) trailers: Option<wraith_recording::Headers>,
}

impl PendingExchange {
    /// The body is done: build the exchange and hand it to its session for scrubbing and
    /// writing. `safety`, `content` and `correlation` are filled by the scrubber and the session
    /// writer.
    pub(crate) fn complete(self, captured: CapturedBody) {
        if captured.over_limit {
            // The path only: the query may hold a secret.
            tracing::warn!(
                "the response body of {} {} is longer than the recorder keeps ({} bytes): the \
                 client got it whole, the recording holds its first {} bytes, marked \
                 truncated=true",
                self.request.method,
                self.request.path,
                captured.body.len(),
                captured.body.len()
            );
            self.ticket.note_cut_at_limit();
        }
        let mut response = self.response;
        response.trailers = captured.trailers;
        let exchange = build_exchange(
            self.request,
            response,
            Timing {
                request_start_us: self.request_start_us,
                first_byte_us: self.first_byte_us,
                last_byte_us: captured.last_byte_us,
            },
            captured.first_data_us.unwrap_or(captured.last_byte_us),
            captured.body,
            captured.truncated,
        );
        self.ticket.complete(exchange);
    }
}

/// One unary HTTP exchange: the whole response body in a single server `data` frame stamped
/// with the time its first bytes arrived (an empty body still gets its one, empty, frame so
/// every proxied exchange has the same shape).
pub(crate) fn build_exchange(
    request: RecordedRequest,
    response: RecordedResponse,
    timing: Timing,
    frame_us: u64,
    body: Vec<u8>,
    truncated: bool,
) -> Exchange {
    Exchange {
        protocol: "http".to_string(),
        request,
        response,
        frames: vec![Frame {
            direction: "server".to_string(),
            timestamp_us: frame_us,
            body,
            frame_type: "data".to_string(),
        }],
        timing,
        correlation: Correlation::default(),
        safety: Safety::default(),
        content: Content::default(),
        truncated,
    }
}

/// Recordings hold plain bodies (see [`crate::headers`]), but some upstreams compress their
/// answers although the recorder asked for `identity`, and a client may send its request body
/// compressed (`Content-Encoding` on the request). Either body is recorded decoded, without its
/// `content-encoding` (and with a recorded `content-length` set to the decoded length), so the
/// scrubber sees inside it and synth reads it. The upstream and the client already got the bytes
/// exactly as they were sent: only the recording changes. A body that does not decode (an
/// unsupported coding such as `compress`, corrupt or cut data, more than `limit` bytes decoded) is
/// recorded as it was, with its header, and a warning. Blocking work: run it off the async
/// workers.
pub(crate) fn decode_recorded_bodies(exchange: &mut Exchange, limit: usize) {
    let request = &mut exchange.request;
    // Unshared here, so taking the bytes out and back copies nothing.
    let mut body = Vec::from(std::mem::take(&mut request.body));
    let decoding = decode_message_body(&mut request.headers, &mut body, limit);
    request.body = body.into();
    match decoding {
        Decoding::Plain => {}
        Decoding::Decoded { codings } => tracing::debug!(
            method = %request.method,
            path = %request.path,
            "request body was `{codings}`-encoded: recorded decoded"
        ),
        Decoding::Kept { codings, error } => tracing::warn!(
            method = %request.method,
            path = %request.path,
            "request body recorded still `{codings}`-encoded: {error}; the scrubber cannot see \
             inside it and synth reads it as bytes",
        ),
    }
    // `build_exchange` makes exactly one server frame.
    let Some(frame) = exchange.frames.first_mut() else {
        return;
    };
    match decode_message_body(&mut exchange.response.headers, &mut frame.body, limit) {
        Decoding::Plain => {}
        Decoding::Decoded { codings } => tracing::debug!(
            method = %exchange.request.method,
            path = %exchange.request.path,
            "response body was `{codings}`-encoded although identity was asked for: recorded decoded"
        ),
        Decoding::Kept { codings, error } => tracing::warn!(
            method = %exchange.request.method,
            path = %exchange.request.path,
            "response body recorded still `{codings}`-encoded{cut}: {error}; the scrubber cannot \
             see inside it and synth reads it as bytes",
            cut = if exchange.truncated { " (it was cut short)" } else { "" },
        ),
    }
}
