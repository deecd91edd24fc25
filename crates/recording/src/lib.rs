//! Recordings on disk: the [`Exchange`] type, the WREC reader and writer (zstd + CBOR), session
//! manifests, HAR import and the scrubber.
//!
//! This crate only deals with files and bytes. It knows nothing about models or serving.
//! Invariant: no unscrubbed exchange reaches disk through it — [`SessionWriter::append`] takes a
//! [`ScrubbedExchange`], which only [`Scrubber::scrub`] makes.

// Tests may unwrap: a panic there is a test failure with a clear location.
#![cfg_attr(test, allow(clippy::unwrap_used))]

pub mod encoding;
pub mod error;
pub mod exchange;
pub mod fsutil;
pub mod har;
pub mod manifest;
pub mod scrub;
pub mod session;
pub mod terminal;
pub mod wrec;

pub use encoding::{DecodeError, Decoding, decode_message_body, decode_sessions, decoded_exchange};
pub use error::RecordingError;
pub use exchange::{
    Content, Correlation, Exchange, Frame, Headers, RecordedRequest, RecordedResponse,
    RecordedSession, Safety, Timing, header_value,
};
pub use manifest::Manifest;
pub use scrub::{HmacKey, ScrubError, ScrubPolicy, ScrubbedExchange, Scrubber};
pub use session::{
    SessionMeta, SessionProblem, SessionWriter, check_exchange_files, check_sessions,
    new_session_id, read_exchange_file, read_session, read_sessions, recover_written_exchanges,
};
pub use wrec::{MAX_EXCHANGE_BYTES, encode_exchange, read_exchange};
