//! Who is asking: the request header a recorded or served request's acting principal is read
//! from, and the key synth stores and the engine compares for it (`Moment::principal`, the
//! per-principal snapshots, the acting principal's own record).
//!
//! `Authorization` names the principal when it is sent. Many APIs send their credential in a
//! header of their own instead (`X-Api-Key`, `Private-Token`, `X-Auth-Token`); without it two
//! users recorded against such an API would be one principal, and the twin would answer one
//! user's records to the other. Such a header is read only when `Authorization` is absent.
//! A browser's API authenticates it by a session cookie instead (`sessionid`, `connect.sid`,
//! `_app_session`, `JSESSIONID`, an `access-token`): that cookie names the principal when
//! neither is sent. The rest of the `Cookie` header (analytics, preferences) never does.
//!
//! Not here: what a credential's value is recorded as (the scrubber tokenizes it; `serve` maps
//! an incoming value the same way before it compares).

/// The header a request's principal is read from, as (lowercase name, value): `Authorization`
/// when it is sent; otherwise the first, by lowercase name, of the headers that carry an API
/// credential by themselves ([`is_credential_header`]); otherwise `cookie` with the session
/// cookie's `name=value` pair ([`session_cookie`]). `None` for a request without credentials
/// (the anonymous principal). `headers` are (name, value) pairs in any case; the first value
/// of a name counts.
pub fn principal_header<'a, I>(headers: I) -> Option<(String, &'a str)>
where
    I: IntoIterator<Item = (&'a str, &'a str)>,
{
    let mut best: Option<(String, &'a str)> = None;
    let mut cookie: Option<&'a str> = None;
    for (name, value) in headers {
        let lname = name.to_ascii_lowercase();
        if lname == "authorization" {
            return Some((lname, value));
        }
        if lname == "cookie" {
            if cookie.is_none() {
                cookie = session_cookie(value);
            }
        } else if is_credential_header(&lname) && best.as_ref().is_none_or(|(b, _)| lname < *b) {
            best = Some((lname, value));
        }
    }
    best.or_else(|| cookie.map(|pair| ("cookie".to_string(), pair)))
}

/// The session cookie of a `Cookie` header value, as its `name=value` pair: of the cookies
/// whose name says it holds a session or an access credential ([`is_session_cookie`]) and
/// whose value is not empty, the first by lowercase name. `None` when none does.
pub fn session_cookie(header: &str) -> Option<&str> {
    header
        .split(';')
        .map(str::trim)
        .filter_map(|pair| {
            let (name, value) = pair.split_once('=')?;
            let lname = name.trim().to_ascii_lowercase();
            let session = !value.trim().is_empty() && is_session_cookie(&lname);
            session.then_some((lname, pair))
        })
        .min_by(|a, b| a.0.cmp(&b.0))
        .map(|(_, pair)| pair)
}

/// A cookie name (lowercase) that holds a session or an access credential: one with `sess` in
/// it (`session`, `sessionid`, `_app_session`, `JSESSIONID`, `PHPSESSID`,
/// `ASP.NET_SessionId`), `sid` as a word (`sid`, `connect.sid`), or a word `token`, `jwt` or
/// `auth` (`access_token`, `sb-access-token`, `jwt`, `auth`), but not a CSRF guard
/// (`csrftoken`, `XSRF-TOKEN`).
pub fn is_session_cookie(lname: &str) -> bool {
    if lname.contains("csrf") || lname.contains("xsrf") {
        return false;
    }
    if lname.contains("sess") {
        return true;
    }
    lname
        .split(|c: char| !c.is_ascii_alphanumeric())
        .any(|w| matches!(w, "sid" | "token" | "jwt" | "auth"))
}

/// The principal key of a credential header's (recorded) value: an `Authorization` value as
/// it is (models hold it that way), any other header as `name: value`, so a key sent in one
/// header is never the same principal as the same text sent in another.
pub fn principal_key(lname: &str, value: &str) -> String {
    if lname == "authorization" {
        value.to_string()
    } else {
        format!("{lname}: {value}")
    }
}

/// The principal key of a request whose header values are compared as they are (recordings,
/// whose credentials are already tokenized): [`principal_key`] of [`principal_header`].
pub fn recorded_principal<'a, I>(headers: I) -> Option<String>
where
    I: IntoIterator<Item = (&'a str, &'a str)>,
{
    principal_header(headers).map(|(name, value)| principal_key(&name, value))
}

/// A header (lowercase name) other than `Authorization` whose value names who is asking:
/// an `…-Authorization` header (`X-Authorization`; not `Proxy-Authorization`, which names the
/// client to a proxy), an API key (`X-Api-Key`, `Api-Key`, `Apikey`, `X-Goog-Api-Key`) or an
/// access token (`Private-Token`, `X-Auth-Token`, `X-Access-Token`). A CSRF token
/// (`X-CSRF-Token`, `X-XSRF-Token`) is a form's guard, not a principal.
pub fn is_credential_header(lname: &str) -> bool {
    let words: Vec<&str> = lname.split(['-', '_']).filter(|w| !w.is_empty()).collect();
    let Some((last, before)) = words.split_last() else {
        return false;
    };
    let prev = before.last().copied();
    match *last {
        "authorization" => !before.is_empty() && prev != Some("proxy"),
        "apikey" => true,
        "key" => prev == Some("api"),
        "token" => matches!(
            prev,
            Some("auth" | "access" | "private" | "api" | "session")
        ),
        _ => false,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn authorization_wins_over_any_other_credential_header() {
        let h = [("X-Api-Key", "k1"), ("Authorization", "Bearer t")];
        assert_eq!(
            principal_header(h),
            Some(("authorization".to_string(), "Bearer t"))
        );
        assert_eq!(recorded_principal(h).as_deref(), Some("Bearer t"));
    }

    #[test]
    fn an_api_key_header_names_the_principal_when_authorization_is_absent() {
        let h = [("Accept", "*/*"), ("X-Api-Key", "k1")];
        assert_eq!(recorded_principal(h).as_deref(), Some("x-api-key: k1"));
        // Several: the first by name, whatever order they were sent in.
        let h = [("X-Auth-Token", "t"), ("Private-Token", "p")];
        assert_eq!(recorded_principal(h).as_deref(), Some("private-token: p"));
        let h = [("Private-Token", "p"), ("X-Auth-Token", "t")];
        assert_eq!(recorded_principal(h).as_deref(), Some("private-token: p"));
    }

    #[test]
    fn a_session_cookie_names_the_principal_when_no_credential_header_is_sent() {
        let h = [("Cookie", "_ga=GA1.2.3; sessionid=s1; theme=dark")];
        assert_eq!(
            recorded_principal(h).as_deref(),
            Some("cookie: sessionid=s1")
        );
        // Several session cookies: the first by name, whatever order they were sent in.
        let h = [("Cookie", "connect.sid=c; _app_session=a")];
        assert_eq!(
            recorded_principal(h).as_deref(),
            Some("cookie: _app_session=a")
        );
        // A credential header wins over any cookie.
        let h = [("Cookie", "sessionid=s1"), ("X-Api-Key", "k1")];
        assert_eq!(recorded_principal(h).as_deref(), Some("x-api-key: k1"));
        for yes in [
            "session",
            "sessionid",
            "_myapp_session",
            "jsessionid",
            "phpsessid",
            "asp.net_sessionid",
            "connect.sid",
            "sid",
            "access_token",
            "sb-access-token",
            "jwt",
            "next-auth.session-token",
        ] {
            assert!(is_session_cookie(yes), "{yes}");
        }
        for no in [
            "_ga",
            "theme",
            "csrftoken",
            "xsrf-token",
            "consid",
            "lang",
            "",
        ] {
            assert!(!is_session_cookie(no), "{no}");
        }
        // An empty session cookie is no credential.
        assert_eq!(session_cookie("sessionid=; theme=dark"), None);
    }

    #[test]
    fn requests_without_credentials_are_anonymous() {
        let h = [
            ("X-CSRF-Token", "c"),
            ("Proxy-Authorization", "Basic x"),
            ("Idempotency-Key", "i"),
            ("Cookie", "a=b"),
        ];
        assert_eq!(recorded_principal(h), None);
    }

    fn header_name() -> impl proptest::strategy::Strategy<Value = String> {
        proptest::prop_oneof![
            proptest::strategy::Just("Authorization".to_string()),
            proptest::strategy::Just("X-Api-Key".to_string()),
            proptest::strategy::Just("x-auth-token".to_string()),
            proptest::strategy::Just("Private-Token".to_string()),
            proptest::strategy::Just("X-CSRF-Token".to_string()),
            "[A-Za-z]{1,6}(-[A-Za-z]{1,6}){0,2}",
        ]
    }

    proptest::proptest! {
        /// Who is asking does not depend on the order the headers were sent in (names are
        /// distinct, as one request's first values of each name are).
        #[test]
        fn the_principal_does_not_depend_on_header_order(
            names in proptest::collection::btree_set(header_name(), 0..6),
            values in proptest::collection::vec("[a-z0-9]{1,8}", 6),
            shift in 0usize..6,
        ) {
            let mut seen = std::collections::BTreeSet::new();
            let pairs: Vec<(String, String)> = names
                .into_iter()
                .filter(|n| seen.insert(n.to_ascii_lowercase()))
                .zip(values)
                .collect();
            let forward = recorded_principal(pairs.iter().map(|(k, v)| (k.as_str(), v.as_str())));
            let mut rotated = pairs.clone();
            if !rotated.is_empty() {
                let k = shift % rotated.len();
                rotated.rotate_left(k);
            }
            rotated.reverse();
            let backward =
                recorded_principal(rotated.iter().map(|(k, v)| (k.as_str(), v.as_str())));
            proptest::prop_assert_eq!(forward, backward);
        }
    }

    #[test]
    fn credential_header_names() {
        for yes in [
            "x-api-key",
            "api-key",
            "apikey",
            "x-goog-api-key",
            "x_api_key",
            "private-token",
            "x-auth-token",
            "x-access-token",
            "x-authorization",
        ] {
            assert!(is_credential_header(yes), "{yes}");
        }
        for no in [
            "authorization-", // no word before `authorization`: not `…-Authorization`
            "proxy-authorization",
            "x-csrf-token",
            "x-xsrf-token",
            "idempotency-key",
            "sec-websocket-key",
            "token",
            "key",
            "content-type",
            "",
        ] {
            assert!(!is_credential_header(no), "{no}");
        }
    }
}
