//! Fuzz target: `Packet::decode` on arbitrary bytes.
//!
//! Decoding must never panic. Whatever it accepts must re-encode to exactly the input (the wire
//! format has a single encoding per packet), and an ACK's validated feedback must iterate to
//! exactly its feedback area.
#![no_main]

use acp_core::wire::{Ack, Packet, Update};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(packet) = Packet::decode(data) else {
        return;
    };
    let mut out = vec![0u8; data.len()];
    let encoded = match packet {
        Packet::Update(u) => {
            assert_eq!(Update::decode(data), Ok(u));
            u.encode(&mut out)
        }
        Packet::Ack(a) => {
            assert_eq!(Ack::decode(data), Ok(a));
            let mut covered = 0;
            for item in a.feedback_items() {
                covered += 2 + item.value.len();
                assert!(covered <= a.feedback.len());
            }
            assert_eq!(
                covered,
                a.feedback.len(),
                "feedback iteration stopped early"
            );
            a.encode(&mut out)
        }
    };
    assert_eq!(encoded, Ok(data.len()));
    assert_eq!(out, data, "re-encoding differs from the input");
});
