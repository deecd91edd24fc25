//! One module per subcommand.

pub mod check;
pub mod import;
pub mod init;
pub mod inspect;
pub mod record;
pub mod serve;
pub mod synth;
