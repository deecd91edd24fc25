//! A generated value of a hyphen-grouped shape (`IdShape::Grouped`: a client key such as
//! `DD873740-C520-49DE-825B296BA2ABCED7`) renders fresh groups of the recorded lengths and
//! alphabet.

use crate::support;

use serde_json::json;
use support::*;
use wraith_model::*;

#[test]
fn grouped_key_renders_fresh_groups_of_the_recorded_lengths() {
    let create = R::new("POST", "/v1/clients")
        .variant(
            200,
            Guard::Always,
            obj(vec![(
                "api_key",
                gen_id(IdShape::Grouped {
                    charset: IdCharset::UpperAlnum,
                    groups: vec![8, 4, 4, 16],
                }),
            )]),
        )
        .build();
    let e = engine(model(vec![create], Vec::new()), det_opts());
    let mut keys = Vec::new();
    for _ in 0..2 {
        let r = send(&e, Some("a"), "POST", "/v1/clients", json!({}));
        assert_eq!(r.status, 200);
        let key = body(&r)["api_key"].as_str().unwrap_or_default().to_string();
        let lens: Vec<usize> = key.split('-').map(str::len).collect();
        assert_eq!(lens, vec![8, 4, 4, 16], "{key}");
        assert!(
            key.bytes()
                .all(|b| b == b'-' || b.is_ascii_digit() || b.is_ascii_uppercase()),
            "{key}"
        );
        keys.push(key);
    }
    assert_ne!(keys[0], keys[1], "each answer mints its own key");
}
