//! A twin folder on disk: finding it (`<twin>` is a name under `./twins/` or a path), its layout,
//! and its configuration files (`wraith.toml`, the optional `drift.toml`). Atomic file writes live here too.
//!
//! Not here: the recording format (`wraith-recording`), the model (`wraith-model`), behaviour.

// Tests may unwrap: a panic there is a test failure with a clear location.
#![cfg_attr(test, allow(clippy::unwrap_used))]

pub mod config;
pub mod dir;
pub mod drift;
pub mod duration;

pub use config::{CLOCK_EPOCH_RANGE, MAX_REQUEST_BODY_MB, validate_clock_epoch};
pub use config::{
    ClockConfig, ClockMode, ConfigWarning, DeviationEntry, DeviationPolicy, DiffConfig,
    DiffThresholds, Fidelity, FieldClassRule, GenerateConfig, HandlersConfig, IdempotencyConfig,
    KeyingField, LatencyConfig, LatencyMode, LimitsConfig, LuaConfig, LuaOnError, ProxyConfig,
    ProxyMode, RateLimit, RequestKeyingConfig, RequestKeyingMode, RequestKeyingRoute, ServeConfig,
    ServiceConfig, SessionMode, SuppressRule, TaggedUnionPolicy, ThresholdOverride, TwinConfig,
    UnknownEntity,
};
pub use dir::{TwinDir, TwinError};
pub use drift::{DriftConfig, DriftProblem, DriftReclassifyEntry, DriftSuppressEntry};
pub use wraith_recording::fsutil::{
    read_file, read_file_to_string, write_atomic, write_atomic_all, write_target,
};
