//! `manifest.json`: one per recording session.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
    pub complete: bool,
    pub end_time_us: u64,
    pub exchange_count: u64,
    pub policy_hash: String,
    pub proxy_mode: String,
    pub schema_version: u32,
    pub session_id: String,
    pub start_time_us: u64,
    pub tags: Vec<String>,
    pub tool_version: String,
}
