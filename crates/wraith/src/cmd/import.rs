//! `wraith import` (not built yet).

use crate::exit::{CliError, CmdResult};

#[derive(clap::Args)]
pub struct Args {
    /// Twin name under ./twins/ or path to a twin folder.
    pub twin: Option<String>,
}

pub fn run(_args: Args) -> CmdResult {
    Err(CliError::usage(anyhow::anyhow!(
        "`wraith import` is not built yet"
    )))
}
