//! The WREC decoder on arbitrary bytes: both as a whole `.wrec.zst` file and as the CBOR
//! payload inside one (the zstd layer would hide most CBOR mutations behind checksum errors).
//! A decoded exchange must encode and decode back to itself.
#![no_main]

use libfuzzer_sys::fuzz_target;
use wraith_recording::wrec::{decode_cbor, encode_cbor, read_exchange};

fuzz_target!(|data: &[u8]| {
    let _ = read_exchange(data);
    if let Ok(ex) = decode_cbor(data) {
        let again = decode_cbor(&encode_cbor(&ex)).expect("a decoded exchange re-encodes");
        assert_eq!(again, ex);
    }
});
