//! The HMAC key behind tokens: `WRAITH_HMAC_KEY`, or (outside CI) a machine-local key file.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use super::{ScrubError, hex};

/// Tokenization key. Its bytes never appear in output; only [`HmacKey::fingerprint`] does.
#[derive(Clone)]
pub struct HmacKey(Vec<u8>);

impl std::fmt::Debug for HmacKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "HmacKey({})", self.fingerprint())
    }
}

/// The environment key resolution reads (separate from the process env so it can be tested).
#[derive(Debug, Clone, Default)]
pub struct KeyEnv {
    /// `WRAITH_HMAC_KEY`.
    pub hmac_key: Option<String>,
    /// `CI`.
    pub ci: Option<String>,
    /// `XDG_CONFIG_HOME`.
    pub xdg_config_home: Option<PathBuf>,
    /// `HOME`.
    pub home: Option<PathBuf>,
}

impl KeyEnv {
    /// Read the variables from the process environment.
    pub fn from_process() -> KeyEnv {
        let var = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
        KeyEnv {
            hmac_key: var("WRAITH_HMAC_KEY"),
            ci: var("CI"),
            xdg_config_home: var("XDG_CONFIG_HOME").map(PathBuf::from),
            home: var("HOME").map(PathBuf::from),
        }
    }

    fn in_ci(&self) -> bool {
        self.ci
            .as_deref()
            .is_some_and(|v| v.eq_ignore_ascii_case("true") || v == "1")
    }
}

/// `<config dir>/wraith/hmac.key`: `$XDG_CONFIG_HOME` or `$HOME/.config`.
pub fn key_file_path(env: &KeyEnv) -> Option<PathBuf> {
    let base = env
        .xdg_config_home
        .clone()
        .or_else(|| env.home.as_ref().map(|h| h.join(".config")))?;
    Some(base.join("wraith").join("hmac.key"))
}

impl HmacKey {
    pub fn from_bytes(bytes: impl Into<Vec<u8>>) -> HmacKey {
        HmacKey(bytes.into())
    }

    pub(crate) fn bytes(&self) -> &[u8] {
        &self.0
    }

    /// First 8 hex chars of SHA-256 of the key: names the key without revealing it.
    pub fn fingerprint(&self) -> String {
        let mut s = hex(&Sha256::digest(&self.0));
        s.truncate(8);
        s
    }

    /// Resolve from the process environment; see [`HmacKey::resolve_with`].
    pub fn resolve() -> Result<HmacKey, ScrubError> {
        Self::resolve_with(&KeyEnv::from_process())
    }

    /// `WRAITH_HMAC_KEY` when set; otherwise, in CI (`CI=true`), a policy refusal; otherwise the
    /// machine-local key file, created (mode 0600, random bytes) on first use so tokens stay
    /// stable on this machine across runs.
    pub fn resolve_with(env: &KeyEnv) -> Result<HmacKey, ScrubError> {
        if let Some(k) = &env.hmac_key {
            return Ok(HmacKey(k.as_bytes().to_vec()));
        }
        if env.in_ci() {
            return Err(ScrubError::KeyRequiredInCi);
        }
        let path = key_file_path(env).ok_or(ScrubError::NoKeyLocation)?;
        load_or_create(&path).map(HmacKey)
    }
}

fn load_or_create(path: &Path) -> Result<Vec<u8>, ScrubError> {
    let key_err = |action, source| ScrubError::KeyFile {
        action,
        path: path.to_path_buf(),
        source,
    };
    match crate::fsutil::read_file(path) {
        Ok(bytes) => {
            let trimmed = String::from_utf8_lossy(&bytes).trim().to_string();
            if trimmed.is_empty() {
                return Err(key_err(
                    "use",
                    std::io::Error::other("the key file is empty; delete it to get a new key"),
                ));
            }
            return Ok(trimmed.into_bytes());
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(key_err("read", e)),
    }
    let dir = path.parent().unwrap_or(Path::new("."));
    fs::create_dir_all(dir).map_err(|e| key_err("create the folder of", e))?;
    let mut random = [0u8; 32];
    rand::TryRng::try_fill_bytes(&mut rand::rngs::SysRng, &mut random)
        .map_err(|e| key_err("generate", std::io::Error::other(e.to_string())))?;
    let text = hex(&random);
    // Write a private temp file, then hard-link it into place: link fails if another process
    // created the key first, in which case that key wins and everyone uses the same one.
    let tmp = crate::fsutil::temp_path_beside(path);
    let write = || -> std::io::Result<()> {
        let mut opts = fs::OpenOptions::new();
        opts.write(true).create_new(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            opts.mode(0o600);
        }
        let mut f = opts.open(&tmp)?;
        f.write_all(text.as_bytes())?;
        f.write_all(b"\n")?;
        f.sync_all()
    };
    let written = write();
    let linked = written.and_then(|()| fs::hard_link(&tmp, path));
    let _ = fs::remove_file(&tmp);
    match linked {
        Ok(()) => Ok(text.into_bytes()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            let bytes = crate::fsutil::read_file(path).map_err(|e| key_err("read", e))?;
            Ok(String::from_utf8_lossy(&bytes).trim().as_bytes().to_vec())
        }
        Err(e) => Err(key_err("create", e)),
    }
}
