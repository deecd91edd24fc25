//! Recordings on disk: the [`Exchange`] type, the WREC reader and writer (zstd + CBOR), session
//! manifests, HAR import and the scrubber.
//!
//! This crate only deals with files and bytes. It knows nothing about models or serving.

// Tests may unwrap: a panic there is a test failure with a clear location.
#![cfg_attr(test, allow(clippy::unwrap_used))]

pub mod exchange;
pub mod fsutil;
pub mod manifest;

pub use exchange::{
    Content, Correlation, Exchange, Frame, Headers, RecordedRequest, RecordedResponse,
    RecordedSession, Safety, Timing, header_value,
};
pub use manifest::Manifest;
