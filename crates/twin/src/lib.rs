//! A twin folder on disk: finding it (`<twin>` is a name under `./twins/` or a path), its layout,
//! and its configuration files (`wraith.toml`). Atomic file writes live here too.
//!
//! Not here: the recording format (`wraith-recording`), the model (`wraith-model`), behaviour.
