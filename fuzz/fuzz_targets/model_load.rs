//! Loading a model file (`model/twin.wir.json`) from arbitrary bytes, then the identity checks
//! `wraith lint` runs on it.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(model) = wraith_model::model_from_json_str(text) {
        let _ = wraith_model::validate::id_problems(&model);
    }
});
