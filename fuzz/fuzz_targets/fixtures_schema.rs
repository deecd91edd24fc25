//! `state/schema.json` and fixture sets from arbitrary text, resolved as a session is seeded
//! from them (and as `wraith lint` judges them), with ids sampled from every usable
//! `id_format`. The input is up to five files separated by 0x1E bytes: `state/schema.json`,
//! the `default` set's `fixture.json`, a `child` set's `fixture.json`, a loose
//! `customers.json`, and the `child` set's `patches/customers.patch.json`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use wraith_engine::state_schema::StateSchema;
use wraith_engine::{FixtureSetFiles, FixtureTree};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let mut parts = text.split('\u{1e}');
    let schema = parts.next();
    let default = parts.next().map(str::to_string);
    let child = parts.next().map(str::to_string);
    let loose = parts.next().map(str::to_string);
    let patch = parts.next().map(str::to_string);

    if let Some(schema) = schema
        && let Ok((parsed, _problems)) = StateSchema::parse(schema)
    {
        let mut rng = <rand_chacha::ChaCha8Rng as rand::SeedableRng>::seed_from_u64(7);
        for decl in parsed.types.values() {
            if let Some(format) = &decl.id_format
                && let Ok(g) = format.generator()
            {
                let id = g.sample(&mut rng);
                let _ = format.matches(&id);
            }
        }
    }

    let mut tree = FixtureTree::default();
    tree.sets.insert(
        "default".into(),
        FixtureSetFiles {
            fixture_json: default,
            ..FixtureSetFiles::default()
        },
    );
    if child.is_some() || patch.is_some() {
        let mut set = FixtureSetFiles {
            fixture_json: child,
            ..FixtureSetFiles::default()
        };
        if let Some(p) = patch {
            set.patches.insert("customers".into(), p);
        }
        tree.sets.insert("child".into(), set);
    }
    if let Some(l) = loose {
        tree.loose.insert("customers".into(), l);
    }
    let _ = tree.seeded_types();
    let route_types = [("customers", "id"), ("products", "id")]
        .into_iter()
        .map(|(t, k)| (t.to_string(), k.to_string()));
    let _ = tree.resolve(route_types, schema);
});
