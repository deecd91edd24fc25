//! Value detectors of the default PII pass and the keyed envelopes it writes.
//!
//! Every envelope carries 128 bits of a keyed SHA-256 MAC of (class, value), so two different
//! recorded values never become one served value (the chance of a collision is 2^-128 per pair),
//! and the same value always becomes the same envelope (referential integrity inside and across
//! responses).

use sha2::{Digest, Sha256};

const BASE62: &[u8; 62] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/// HMAC-SHA256(key, domain || value).
pub(crate) fn mac(key: &[u8], domain: &[u8], value: &[u8]) -> [u8; 32] {
    let mut k = [0u8; 64];
    if key.len() > 64 {
        k[..32].copy_from_slice(&Sha256::digest(key));
    } else {
        k[..key.len()].copy_from_slice(key);
    }
    let mut inner = Sha256::new();
    inner.update(k.map(|b| b ^ 0x36));
    inner.update(domain);
    inner.update(value);
    let inner = inner.finalize();
    let mut outer = Sha256::new();
    outer.update(k.map(|b| b ^ 0x5c));
    outer.update(inner);
    outer.finalize().into()
}

/// The first 128 bits of `digest` in base62, fixed width 22.
pub(crate) fn base62_128(digest: &[u8; 32]) -> String {
    let mut buf = [0u8; 16];
    buf.copy_from_slice(&digest[..16]);
    let mut n = u128::from_be_bytes(buf);
    let mut out = [b'0'; 22];
    for slot in out.iter_mut().rev() {
        *slot = BASE62[(n % 62) as usize];
        n /= 62;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Which envelope a value gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Class {
    Email,
    Phone,
    Name,
    Credential,
    Ssn,
}

/// The envelope of `value` for `class`. Emails use the scrubber's pseudonym domain so a value
/// scrubbed at record time and one caught at serve time spell the same way.
pub(crate) fn envelope(key: &[u8], class: Class, value: &str) -> String {
    // The same recorded values are enveloped on every request that serves them: the MAC and
    // the base62 division are memoized per thread (a pure function of key, class and value).
    ENVELOPES.with(|memo| {
        let mut memo = memo.borrow_mut();
        if memo.key != key {
            memo.key = key.to_vec();
            memo.clear();
        }
        let slot = class as usize;
        if let Some(hit) = memo.by_class[slot].get(value) {
            return hit.clone();
        }
        let env = envelope_uncached(key, class, value);
        if memo.len >= ENVELOPE_MEMO_MAX {
            memo.clear();
        }
        memo.len += 1;
        memo.by_class[slot].insert(value.to_string(), env.clone());
        env
    })
}

/// Entries a thread's envelope memo holds before it starts over (bounds its memory).
const ENVELOPE_MEMO_MAX: usize = 4096;

#[derive(Default)]
struct EnvelopeMemo {
    /// The MAC key the entries were computed with.
    key: Vec<u8>,
    /// Value → envelope, one map per [`Class`] (indexed by its discriminant).
    by_class: [std::collections::HashMap<String, String, foldhash::fast::FixedState>; 5],
    len: usize,
}

impl EnvelopeMemo {
    fn clear(&mut self) {
        self.by_class.iter_mut().for_each(|m| m.clear());
        self.len = 0;
    }
}

thread_local! {
    static ENVELOPES: std::cell::RefCell<EnvelopeMemo> =
        std::cell::RefCell::new(EnvelopeMemo::default());
}

fn envelope_uncached(key: &[u8], class: Class, value: &str) -> String {
    let (domain, prefix, suffix): (&[u8], &str, &str) = match class {
        Class::Email => (b"pseudo\0", "user_", "@wraith.local"),
        Class::Phone => (b"phone\0", "phone_", ""),
        Class::Name => (b"name\0", "name_", ""),
        Class::Credential => (b"tok\0", "wraith_tok_", ""),
        Class::Ssn => (b"ssn\0", "ssn_", ""),
    };
    format!(
        "{prefix}{}{suffix}",
        base62_128(&mac(key, domain, value.as_bytes()))
    )
}

/// Already a scrub envelope (record-time or serve-time): never scrubbed again.
pub(crate) fn is_envelope(v: &str) -> bool {
    if v == "[REDACTED]" {
        return true;
    }
    for prefix in ["wraith_tok_", "user_", "phone_", "name_", "ssn_"] {
        if let Some(rest) = v.strip_prefix(prefix) {
            let rest = rest.strip_suffix("@wraith.local").unwrap_or(rest);
            return rest.len() == 22 && rest.bytes().all(|b| b.is_ascii_alphanumeric());
        }
    }
    false
}

/// An RFC 5322-shaped address (`local@domain.tld`), the whole value.
pub(crate) fn is_email(v: &str) -> bool {
    let Some((local, domain)) = v.rsplit_once('@') else {
        return false;
    };
    let local_ok = !local.is_empty()
        && local.len() <= 64
        && local
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-/=?^_`{|}~.".contains(&b));
    // Iterated, not collected: this runs on every served string leaf.
    let labels = || domain.split('.');
    let domain_ok = labels().nth(1).is_some()
        && labels().all(|l| {
            !l.is_empty()
                && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
                && !l.starts_with('-')
        })
        && labels()
            .next_back()
            .is_some_and(|tld| tld.len() >= 2 && tld.bytes().all(|b| b.is_ascii_alphabetic()));
    local_ok && domain_ok
}

/// An E.164 number: `+`, then 7–15 digits, the first not zero; the whole value.
pub(crate) fn is_e164(v: &str) -> bool {
    let Some(digits) = v.strip_prefix('+') else {
        return false;
    };
    (7..=15).contains(&digits.len())
        && digits.bytes().all(|b| b.is_ascii_digit())
        && !digits.starts_with('0')
}

/// A US social security number written `AAA-GG-SSSS`, the whole value: area not 000, 666 or
/// 900–999, group not 00, serial not 0000 (numbers the SSA never issues are ids or codes).
/// The unhyphenated nine digits are left alone: too many ids look like that.
pub(crate) fn is_ssn(v: &str) -> bool {
    let b = v.as_bytes();
    let digits = |r: std::ops::Range<usize>| b[r].iter().all(u8::is_ascii_digit);
    if b.len() != 11
        || b[3] != b'-'
        || b[6] != b'-'
        || !(digits(0..3) && digits(4..6) && digits(7..11))
    {
        return false;
    }
    let (area, group, serial) = (&v[0..3], &v[4..6], &v[7..11]);
    area != "000" && area != "666" && !area.starts_with('9') && group != "00" && serial != "0000"
}

/// A git author or committer line, `Name <email> <unix seconds> <±HHMM>`, the whole value:
/// the name and the email, each as written. A line whose name is already an envelope was
/// rewritten before.
pub(crate) fn git_author(v: &str) -> Option<(&str, &str, &str)> {
    let (person, when) = v.split_once("> ")?;
    let (name, email) = person.rsplit_once(" <")?;
    let (secs, zone) = when.split_once(' ')?;
    let zone_ok = zone.len() == 5
        && matches!(zone.as_bytes()[0], b'+' | b'-')
        && zone[1..].bytes().all(|b| b.is_ascii_digit());
    let secs_ok = !secs.is_empty() && secs.len() <= 12 && secs.bytes().all(|b| b.is_ascii_digit());
    let name = name.trim();
    (zone_ok
        && secs_ok
        && is_email(email)
        && !name.is_empty()
        && !name.contains(['<', '>'])
        && !is_envelope(name))
    .then_some((name, email, when))
}

/// The words of a JSON key, lowercased: `displayName`, `display_name`, `display-name` and
/// `display.name` all give `["display", "name"]` (the recorder's scrubber splits names alike).
pub(crate) fn key_words(key: &str) -> Vec<String> {
    wraith_model::secret_names::name_words(key)
}

/// What a JSON key (or path segment) says about the values under it. The outbound pass asks
/// this for every string leaf of every served body, always about the same few keys, so the
/// answers are memoized per thread (pure functions of the key).
#[derive(Debug, Clone, Copy)]
struct KeyFlags {
    /// [`is_name_key`].
    name: bool,
    /// [`is_credential_key`].
    credential: bool,
    /// [`is_person_word`].
    person: bool,
}

/// Keys a thread's key memo holds before it starts over (bounds its memory).
const KEY_MEMO_MAX: usize = 4096;

thread_local! {
    static KEY_FLAGS: std::cell::RefCell<
        std::collections::HashMap<String, KeyFlags, foldhash::fast::FixedState>,
    > = std::cell::RefCell::new(std::collections::HashMap::default());
}

fn key_flags(key: &str) -> KeyFlags {
    KEY_FLAGS.with(|memo| {
        let mut memo = memo.borrow_mut();
        if let Some(f) = memo.get(key) {
            return *f;
        }
        let f = KeyFlags {
            name: is_name_key_uncached(key),
            credential: is_credential_key_uncached(key),
            person: is_person_word_uncached(key),
        };
        if memo.len() >= KEY_MEMO_MAX {
            memo.clear();
        }
        memo.insert(key.to_string(), f);
        f
    })
}

/// Prefix words of a `*_name` key that name a thing, not a person (`host_name`, `file_name`).
const THING_NAMES: &[&str] = &[
    "host",
    "file",
    "path",
    "type",
    "class",
    "db",
    "database",
    "table",
    "column",
    "field",
    "key",
    "event",
    "app",
    "application",
    "repo",
    "repository",
    "branch",
    "tag",
    "package",
    "module",
    "service",
    "resource",
    "queue",
    "topic",
    "region",
    "zone",
    "cluster",
    "node",
    "device",
    "product",
    "plan",
    "project",
    "bucket",
    "domain",
    "server",
    "dns",
    "image",
    "container",
    "label",
    "attribute",
    "param",
    "parameter",
    "method",
    "operation",
    "variable",
    "env",
    "brand",
    "company",
    "org",
    "organization",
    "team",
    "group",
    "channel",
    "role",
    "scope",
    "category",
    "status",
    "state",
    "country",
    "city",
    "street",
    "currency",
    "locale",
    "language",
    "font",
    "color",
    "icon",
    "template",
    "model",
    "schema",
    "index",
    "view",
    "function",
    "job",
    "task",
    "step",
    "stage",
    "workflow",
    "network",
    "volume",
    "disk",
    "instance",
    "stack",
    "cert",
    "certificate",
    "policy",
    "rule",
    "vendor",
    "site",
    "space",
    "list",
    "board",
    "folder",
    "account_type",
    "plugin",
    "feature",
    "metric",
    "bank",
    "store",
    "shop",
    "merchant",
    "network",
];

/// A field whose string value names a person: `name`, `full_name`, `first_name`, `last_name`,
/// `given_name`, `family_name`, `display_name`, `username`, `login`, `nickname`, and
/// `*_name` unless the prefix names a thing. `hostname`/`filename` are one word, not `name`.
pub(crate) fn is_name_key(key: &str) -> bool {
    key_flags(key).name
}

fn is_name_key_uncached(key: &str) -> bool {
    let words = key_words(key);
    match words.as_slice() {
        [] => false,
        [w] => matches!(
            w.as_str(),
            "name" | "username" | "login" | "nickname" | "fullname"
        ),
        [.., prev, last] if last == "name" => !THING_NAMES.contains(&prev.as_str()),
        _ => false,
    }
}

/// The value looks like a person's name: one to four words, each a capital letter followed by
/// letters (apostrophes, hyphens and a trailing dot allowed: `O'Brien`, `Jean-Luc`, `J.`).
/// Returns the word count (0 = not a name shape).
pub(crate) fn person_name_words(v: &str) -> usize {
    // Counted and checked without collecting: this runs on every served string leaf.
    let count = v.split(' ').count();
    if count > 4 || v.len() > 80 {
        return 0;
    }
    let ok = v.split(' ').all(|w| {
        let mut chars = w.chars();
        let Some(first) = chars.next() else {
            return false;
        };
        first.is_uppercase()
            && chars.clone().count() <= 30
            && chars.all(|c| c.is_alphabetic() || matches!(c, '\'' | '-' | '.'))
    });
    if ok { count } else { 0 }
}

/// Keys and path segments that hold people (`author`, `users`, `customer_account`).
/// Keys APIs wrap a page of records in, which say nothing of what the records are.
pub(crate) fn is_list_envelope_key(key: &str) -> bool {
    matches!(
        key,
        "data"
            | "items"
            | "results"
            | "entries"
            | "records"
            | "objects"
            | "list"
            | "nodes"
            | "node"
            | "edges"
            | "hits"
            | "rows"
            | "elements"
            | "values"
            | "content"
    )
}

pub(crate) fn is_person_word(word: &str) -> bool {
    key_flags(word).person
}

fn is_person_word_uncached(word: &str) -> bool {
    const PEOPLE: &[&str] = &[
        "author",
        "committer",
        "user",
        "owner",
        "customer",
        "account",
        "actor",
        "sender",
        "recipient",
        "member",
        "contact",
        "person",
        "people",
        "profile",
        "employee",
        "assignee",
        "reporter",
        "creator",
        "reviewer",
        "follower",
        "patient",
        "student",
        "buyer",
        "seller",
    ];
    key_words(word).iter().any(|w| {
        let singular = w.strip_suffix('s').unwrap_or(w);
        PEOPLE.contains(&w.as_str()) || PEOPLE.contains(&singular)
    })
}

/// Key words that make a value a credential (`client_secret`, `api_key`, `access_token`): every
/// name the recorder's scrubber tokenizes
/// ([`wraith_model::secret_names::is_secret_field_name`]: `id_token`, `aws_secret_access_key`),
/// and more, since here a value must look like a credential as well.
fn is_credential_key(key: &str) -> bool {
    key_flags(key).credential
}

fn is_credential_key_uncached(key: &str) -> bool {
    if wraith_model::secret_names::is_secret_field_name(key) {
        return true;
    }
    let words = key_words(key);
    let has = |w: &str| words.iter().any(|x| x == w);
    // Cursor and page handles are not secrets even when called tokens.
    if has("cursor")
        || has("page")
        || has("next")
        || has("pagination")
        || has("continuation")
        || has("sync")
        || has("csrf")
    {
        return false;
    }
    has("secret")
        || has("password")
        || has("passwd")
        || has("apikey")
        || (has("api") && has("key"))
        || (has("private") && has("key"))
        || (has("token") && words.len() > 1 && !has("type"))
        || words.as_slice() == ["token"]
}

/// Vendor token prefixes whose values are credentials wherever they appear.
const VENDOR_PREFIXES: &[&str] = &[
    "ghp_",
    "gho_",
    "ghu_",
    "ghs_",
    "ghr_",
    "github_pat_",
    "glpat-",
    "sk_live_",
    "sk_test_",
    "rk_live_",
    "rk_test_",
    "xoxb-",
    "xoxp-",
    "xoxa-",
    "xoxs-",
    "AKIA",
    "ASIA",
    "AIza",
    "npm_",
    "pypi-",
];

/// A JWT with a real JOSE header: three base64url parts, the first a JSON object with `alg`.
fn is_jwt(v: &str) -> bool {
    use base64::Engine as _;
    // Most values are not three dot-separated parts: skip the split for them.
    if v.bytes().filter(|&b| b == b'.').count() != 2 {
        return false;
    }
    let parts: Vec<&str> = v.split('.').collect();
    if parts.len() != 3 || parts[0].len() < 10 {
        return false;
    }
    let Ok(head) = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(parts[0]) else {
        return false;
    };
    serde_json::from_slice::<serde_json::Value>(&head)
        .ok()
        .is_some_and(|h| h.get("alg").is_some())
}

/// A credential-shaped value: under a credential key (8+ characters, no spaces), a JWT, or a
/// vendor-prefixed token of 16+ characters.
pub(crate) fn is_credential(key: &str, v: &str) -> bool {
    if v.len() >= 8 && !v.contains(' ') && is_credential_key(key) {
        return true;
    }
    is_jwt(v) || (v.len() >= 16 && VENDOR_PREFIXES.iter().any(|p| v.starts_with(p)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn name_keys_cover_the_family_but_not_hostname_or_filename() {
        for k in [
            "name",
            "full_name",
            "first_name",
            "lastName",
            "display_name",
            "username",
            "login",
            "author_name",
        ] {
            assert!(is_name_key(k), "{k}");
        }
        for k in [
            "hostname",
            "filename",
            "host_name",
            "file_name",
            "tag_name",
            "names",
        ] {
            assert!(!is_name_key(k), "{k}");
        }
    }

    #[test]
    fn shapes() {
        assert!(is_email("jane.doe@example.com"));
        assert!(!is_email("admin@localhost"));
        assert!(!is_email("not an email"));
        assert!(is_e164("+14155550123"));
        assert!(!is_e164("14155550123"));
        assert!(!is_e164("+0123456"));
        assert_eq!(person_name_words("Jane Doe"), 2);
        assert_eq!(person_name_words("Al"), 1);
        assert_eq!(person_name_words("admin"), 0);
        assert_eq!(person_name_words("Mastodon.py test suite"), 0);
        assert!(is_credential("client_secret", "s3cr3tvalue"));
        assert!(!is_credential("next_page_token", "abcdefghijkl"));
        assert!(!is_credential("token_type", "Bearer"));
        // The recorder's names are credentials here too.
        for key in [
            "aws_secret_access_key",
            "id_token",
            "secret_key",
            "apiKey",
            "private_key",
        ] {
            assert!(is_credential(key, "s3cr3tvalue"), "{key}");
        }
        assert!(!is_credential("idempotency_key", "abcdefghijkl"));
        assert!(!is_credential("key", "abcdefghijkl"));
        assert!(is_credential("note", "ghp_0123456789abcdefghij"));
        assert!(is_ssn("123-45-6789"));
        for not in [
            "000-12-3456",
            "666-12-3456",
            "900-12-3456",
            "123-00-4567",
            "123-45-0000",
        ] {
            assert!(!is_ssn(not), "{not}");
        }
        assert!(!is_ssn("123456789") && !is_ssn("2024-01-15") && !is_ssn("12-345-6789"));
        assert_eq!(
            git_author("Jane Doe <jane@example.com> 1700000000 +0100"),
            Some(("Jane Doe", "jane@example.com", "1700000000 +0100"))
        );
        assert_eq!(git_author("Jane Doe <jane@example.com>"), None);
        assert_eq!(git_author("Jane Doe <not-an-email> 1700000000 +0100"), None);
        assert_eq!(
            git_author("name_0123456789abcdefghijkl <user_x@wraith.local> 1 +0000"),
            None,
            "already rewritten"
        );
    }

    #[test]
    fn memoized_envelope_matches_the_mac_across_keys_and_past_the_memo_bound() {
        let classes = [
            Class::Email,
            Class::Phone,
            Class::Name,
            Class::Credential,
            Class::Ssn,
        ];
        for round in 0..2 {
            for key in [&b"first-key"[..], &b"second-key"[..], &[7u8; 80][..]] {
                for i in 0..(ENVELOPE_MEMO_MAX + 10) {
                    let value = format!("value-{round}-{i}");
                    let class = classes[i % classes.len()];
                    assert_eq!(
                        envelope(key, class, &value),
                        envelope_uncached(key, class, &value)
                    );
                }
                // A value asked again under the same key answers from the memo identically.
                assert_eq!(
                    envelope(key, Class::Name, "Jane Doe"),
                    envelope_uncached(key, Class::Name, "Jane Doe")
                );
            }
        }
    }

    #[test]
    fn memoized_key_flags_match_the_word_rules() {
        for _ in 0..2 {
            for k in [
                "name",
                "host_name",
                "client_secret",
                "next_page_token",
                "token_type",
                "authors",
                "customer_account",
                "hostname",
                "",
            ] {
                assert_eq!(is_name_key(k), is_name_key_uncached(k), "{k}");
                assert_eq!(is_credential_key(k), is_credential_key_uncached(k), "{k}");
                assert_eq!(is_person_word(k), is_person_word_uncached(k), "{k}");
            }
        }
        assert!(is_person_word("authors") && !is_person_word("hostname"));
    }

    #[test]
    fn jwt_needs_exactly_three_parts() {
        // {"alg":"HS256"} as base64url, then two more parts.
        let head = "eyJhbGciOiJIUzI1NiJ9";
        assert!(is_jwt(&format!("{head}.e30.sig")));
        assert!(!is_jwt(&format!("{head}.e30")));
        assert!(!is_jwt(&format!("{head}.e30.sig.more")));
    }

    proptest::proptest! {
        #[test]
        fn envelopes_are_injective_and_stable(a in ".{0,40}", b in ".{0,40}") {
            let key = b"k";
            for class in [Class::Email, Class::Phone, Class::Name, Class::Credential] {
                let (ea, eb) = (envelope(key, class, &a), envelope(key, class, &b));
                proptest::prop_assert_eq!(a == b, ea == eb);
                proptest::prop_assert_eq!(&ea, &envelope(key, class, &a));
                proptest::prop_assert!(is_envelope(&ea));
            }
        }
    }
}
