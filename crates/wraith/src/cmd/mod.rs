//! One module per subcommand.

pub mod check;
pub mod compose;
pub mod coverage;
pub mod import;
pub mod init;
pub mod inspect;
pub mod lint;
pub mod ready_file;
pub mod record;
pub mod route;
pub mod serve;
pub mod synth;
