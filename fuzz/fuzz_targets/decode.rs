//! Fuzz target: `Packet::decode` on arbitrary bytes.
//!
//! Decoding must never panic. Whatever it accepts must re-encode to exactly the input (the wire
//! format has a single encoding per packet), and an ACK's validated feedback must iterate to
//! exactly its feedback area. A sealed packet (flag AUTH) is framing only here: re-encoding it
//! unsealed must give the input without its key id, AUTH flag and trailing tag.
#![no_main]

use acp_core::wire::{Ack, Cookie, Packet, Update, FLAG_AUTH, FLAG_COOKIE, HEADER_LEN, TAG_LEN};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(packet) = Packet::decode(data) else {
        return;
    };
    let sealed = packet.is_sealed();
    assert_eq!(sealed, data[4] & FLAG_AUTH != 0);
    let mut out = vec![0u8; data.len()];
    let encoded = match packet {
        Packet::Update(mut u) => {
            assert_eq!(Update::decode(data), Ok(u));
            assert_eq!(u.cookie.is_some(), u.flags & FLAG_COOKIE != 0);
            u.flags &= !FLAG_AUTH;
            u.encode(&mut out)
        }
        Packet::Ack(mut a) => {
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
            a.flags &= !FLAG_AUTH;
            a.encode(&mut out)
        }
        Packet::Cookie(mut c) => {
            assert_eq!(Cookie::decode(data), Ok(c));
            c.flags &= !FLAG_AUTH;
            c.encode(&mut out)
        }
    };
    if !sealed {
        assert_eq!(encoded, Ok(data.len()));
        assert_eq!(out, data, "re-encoding differs from the input");
        return;
    }
    // Sealed: the same packet unsealed, then the tag; byte 5 is the key id.
    let len = data.len() - TAG_LEN;
    assert_eq!(encoded, Ok(len));
    assert_eq!(out[..4], data[..4]);
    assert_eq!(out[4], data[4] & !FLAG_AUTH);
    assert_eq!(out[5], 0);
    assert_eq!(
        out[6..len],
        data[6..len],
        "re-encoding differs from the input"
    );
    assert!(len >= HEADER_LEN);
});
