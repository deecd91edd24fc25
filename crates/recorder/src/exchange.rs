//! Assembling the recorded [`Exchange`] from what the proxy saw.

use wraith_recording::{
    Content, Correlation, Exchange, Frame, RecordedRequest, RecordedResponse, Safety, Timing,
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
    pub(crate) first_data_us: Option<u64>,
    pub(crate) last_byte_us: u64,
}

impl PendingExchange {
    /// The body is done: build the exchange and hand it to its session for scrubbing and
    /// writing. `safety`, `content` and `correlation` are filled by the scrubber and the session
    /// writer.
    pub(crate) fn complete(self, captured: CapturedBody) {
        let exchange = build_exchange(
            self.request,
            self.response,
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
