//! Names whose values are secrets: one rule for the recorder's scrubber (`wraith-recording`),
//! the exact-replay key ([`crate::request_key::normalize_query`]) and `serve`'s outbound pass
//! (`wraith-engine`), so what a recording holds tokenized, what the twin keys on and what it
//! tokenizes in its answers are judged alike.
//!
//! A name is split into lowercase words (at `-`, `_`, `.`, spaces and camelCase boundaries:
//! `apiKey`, `api_key` and `Api-Key` all give `["api", "key"]`) and judged by its last word,
//! as a header name is: `id_token`, `clientSecret`, `aws_secret_access_key` and `private_key`
//! are secrets; `token_type`, `expires_in`, `idempotency_key` and a `key` alone are not.

/// The words of a name, lowercased: `displayName`, `display_name`, `display-name` and
/// `display.name` all give `["display", "name"]`; `APIKey` gives `["apikey"]`.
pub fn name_words(name: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut prev_lower = false;
    for c in name.chars() {
        if matches!(c, '_' | '-' | '.' | ' ') {
            if !cur.is_empty() {
                words.push(std::mem::take(&mut cur));
            }
            prev_lower = false;
            continue;
        }
        if c.is_uppercase() && prev_lower && !cur.is_empty() {
            words.push(std::mem::take(&mut cur));
        }
        prev_lower = c.is_lowercase() || c.is_ascii_digit();
        cur.extend(c.to_lowercase());
    }
    if !cur.is_empty() {
        words.push(cur);
    }
    words
}

/// Words a `key` follows when the key is a credential: they say whose key it is
/// (`api_key`, `secret_key`, `aws_secret_access_key`, `Ocp-Apim-Subscription-Key`).
const KEY_OWNERS: &[&str] = &[
    "api",
    "access",
    "secret",
    "private",
    "subscription",
    "auth",
    "client",
    "account",
    "master",
    "consumer",
    "session",
];

/// Whether `words` (see [`name_words`]) end in a word naming a credential: a `token`,
/// `secret`, `password`, `passwd`, `apikey`, `credential(s)` or `authorization`, or a `key`
/// after a word saying whose ([`KEY_OWNERS`]). The rule of header names
/// (`X-Auth-Token`, `Api-Key`) and of every other name here.
pub fn ends_in_secret_word(words: &[String]) -> bool {
    let Some((last, rest)) = words.split_last() else {
        return false;
    };
    match last.as_str() {
        "token" | "secret" | "password" | "passwd" | "apikey" | "credential" | "credentials"
        | "authorization" => true,
        "key" => rest
            .last()
            .is_some_and(|w| KEY_OWNERS.contains(&w.as_str())),
        _ => false,
    }
}

/// A handle that pages or guards a form (`next_page_token`, `continuation_token`,
/// `csrf_token`) is passed back as it came, and is no credential even when called a token.
fn names_a_handle(words: &[String]) -> bool {
    words.iter().any(|w| {
        matches!(
            w.as_str(),
            "cursor" | "page" | "next" | "pagination" | "continuation" | "sync" | "csrf"
        )
    })
}

/// A JSON member name whose value is a secret: [`ends_in_secret_word`], but not a paging or
/// CSRF handle. `{"key": …}` is common data and is not one.
pub fn is_secret_field_name(name: &str) -> bool {
    let words = name_words(name);
    ends_in_secret_word(&words) && !names_a_handle(&words)
}

/// A query parameter or form field whose value is a secret: a JSON member's rule
/// ([`is_secret_field_name`]), a `key` alone (`?key=…` is Google's API key), or a last word
/// `signature` or `sig` (a signed URL's `X-Amz-Signature`, `sig`). A bracketed name is judged
/// by the name it nests too (`user[password]`, `token[]`: see [`innermost_bracket_name`]).
pub fn is_secret_param_name(name: &str) -> bool {
    let judge = |name: &str| {
        let words = name_words(name);
        if words.as_slice() == ["key"] {
            return true;
        }
        if names_a_handle(&words) {
            return false;
        }
        ends_in_secret_word(&words) || words.last().is_some_and(|w| w == "signature" || w == "sig")
    };
    judge(name) || innermost_bracket_name(name).is_some_and(judge)
}

/// The name a bracketed query or form name nests (`user[password]` → `password`,
/// `a[b][c]` → `c`), or its base name when the innermost brackets are empty (`token[]`,
/// `auth[key][]` → `key`); `None` for a name without well-formed brackets.
pub fn innermost_bracket_name(name: &str) -> Option<&str> {
    let (base, rest) = name.split_once('[')?;
    let mut innermost = base;
    for segment in rest.split('[') {
        let inside = segment.strip_suffix(']')?;
        if !inside.is_empty() {
            innermost = inside;
        }
    }
    Some(innermost)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn names_split_into_lowercase_words_at_separators_and_camel_case() {
        assert_eq!(name_words("apiKey"), ["api", "key"]);
        assert_eq!(name_words("X-Amz-Signature"), ["x", "amz", "signature"]);
        assert_eq!(
            name_words("aws_secret_access_key"),
            ["aws", "secret", "access", "key"]
        );
        assert_eq!(name_words("APIKey"), ["apikey"]);
        assert_eq!(name_words("display.name"), ["display", "name"]);
        assert!(name_words("").is_empty());
    }

    #[test]
    fn json_field_names_ending_in_a_credential_word_are_secrets_in_any_case_style() {
        for name in [
            "api_key",
            "apiKey",
            "ApiKey",
            "API_KEY",
            "X-Api-Key",
            "secret",
            "secret_key",
            "secretKey",
            "client_secret",
            "clientSecret",
            "private_key",
            "aws_secret_access_key",
            "id_token",
            "idToken",
            "access_token",
            "refresh_token",
            "token",
            "password",
            "new_password",
            "passwd",
            "apikey",
            "credentials",
            "Authorization",
            "session_key",
        ] {
            assert!(is_secret_field_name(name), "{name}");
        }
    }

    #[test]
    fn json_field_look_alikes_are_not_secrets() {
        for name in [
            "key",
            "Key",
            "idempotency_key",
            "public_key",
            "token_type",
            "tokenType",
            "expires_in",
            "access_key_id",
            "next_page_token",
            "nextPageToken",
            "page_token",
            "continuation_token",
            "csrf_token",
            "password_policy",
            "tokens",
            "sig",
            "signature",
            "name",
            "",
        ] {
            assert!(!is_secret_field_name(name), "{name}");
        }
    }

    #[test]
    fn query_parameters_add_key_alone_and_signatures() {
        for name in [
            "key",
            "sig",
            "signature",
            "X-Amz-Signature",
            "apikey",
            "api_key",
            "access_token",
            "user[password]",
            "token[]",
            "auth[key][]",
        ] {
            assert!(is_secret_param_name(name), "{name}");
        }
        for name in [
            "page",
            "limit",
            "keys",
            "key_id",
            "sort_key",
            "idempotency_key",
            "token_type",
            "page_token",
            "signature_version",
            "X-Amz-Date",
            "user[name]",
        ] {
            assert!(!is_secret_param_name(name), "{name}");
        }
    }

    #[test]
    fn innermost_bracket_names() {
        assert_eq!(innermost_bracket_name("user[password]"), Some("password"));
        assert_eq!(innermost_bracket_name("a[b][c]"), Some("c"));
        assert_eq!(innermost_bracket_name("token[]"), Some("token"));
        assert_eq!(innermost_bracket_name("auth[key][]"), Some("key"));
        assert_eq!(innermost_bracket_name("plain"), None);
        assert_eq!(innermost_bracket_name("bad[x"), None);
    }
}
