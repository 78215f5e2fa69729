//! Property tests for `acp_core::wire` (round trips, robustness against arbitrary input, and the
//! decoding rules of `docs/PROTOCOL.md`).

use acp_core::wire::{
    self, Ack, AggregationError, AggregationReport, DecodeError, FeedbackItem, Packet, Update,
    AGGREGATION_LEN, FLAG_PROBE, FLAG_STALE, HEADER_LEN,
};
use proptest::prelude::*;

/// Modest case counts keep this file well under a second or two in debug builds.
fn config() -> ProptestConfig {
    ProptestConfig {
        cases: 256,
        ..ProptestConfig::default()
    }
}

#[derive(Debug, Clone)]
struct UpdateFields {
    flags: u8,
    session: u64,
    seq: u64,
    gen_ts: u64,
    acked_seq: u64,
    hold_ns: u32,
    payload: Vec<u8>,
}

impl UpdateFields {
    fn packet(&self) -> Update<'_> {
        Update {
            flags: self.flags,
            session: self.session,
            seq: self.seq,
            gen_ts: self.gen_ts,
            acked_seq: self.acked_seq,
            hold_ns: self.hold_ns,
            cookie: None,
            payload: &self.payload,
        }
    }

    fn bytes(&self) -> Vec<u8> {
        let p = self.packet();
        let mut out = vec![0u8; p.encoded_len()];
        assert_eq!(p.encode(&mut out), Ok(out.len()));
        out
    }
}

fn update_fields() -> impl Strategy<Value = UpdateFields> {
    (
        prop_oneof![Just(0u8), Just(FLAG_PROBE)],
        any::<u64>(),
        any::<u64>(),
        any::<u64>(),
        any::<u64>(),
        any::<u32>(),
        prop::collection::vec(any::<u8>(), 0..600),
    )
        .prop_map(
            |(flags, session, seq, gen_ts, acked_seq, hold_ns, payload)| UpdateFields {
                flags,
                session,
                seq,
                gen_ts,
                acked_seq,
                hold_ns,
                payload,
            },
        )
}

#[derive(Debug, Clone)]
struct AckFields {
    flags: u8,
    session: u64,
    seq: u64,
    gen_ts: u64,
    rx_ts: u64,
    hold_ns: u32,
    tlvs: Vec<(u8, Vec<u8>)>,
}

impl AckFields {
    fn items(&self) -> Vec<FeedbackItem<'_>> {
        self.tlvs
            .iter()
            .map(|(kind, value)| FeedbackItem { kind: *kind, value })
            .collect()
    }

    fn feedback(&self) -> Vec<u8> {
        let mut fb = Vec::new();
        wire::encode_feedback(&self.items(), &mut fb).unwrap();
        fb
    }

    fn bytes(&self) -> Vec<u8> {
        let fb = self.feedback();
        let a = Ack {
            flags: self.flags,
            session: self.session,
            seq: self.seq,
            gen_ts: self.gen_ts,
            rx_ts: self.rx_ts,
            hold_ns: self.hold_ns,
            feedback: &fb,
        };
        let mut out = vec![0u8; a.encoded_len()];
        assert_eq!(a.encode(&mut out), Ok(out.len()));
        out
    }
}

fn ack_fields() -> impl Strategy<Value = AckFields> {
    (
        prop_oneof![Just(0u8), Just(FLAG_STALE)],
        any::<u64>(),
        any::<u64>(),
        any::<u64>(),
        any::<u64>(),
        any::<u32>(),
        prop::collection::vec(
            (
                any::<u8>(),
                prop_oneof![
                    prop::collection::vec(any::<u8>(), 0..4),
                    prop::collection::vec(any::<u8>(), 0..=255),
                ],
            ),
            0..6,
        ),
    )
        .prop_map(
            |(flags, session, seq, gen_ts, rx_ts, hold_ns, tlvs)| AckFields {
                flags,
                session,
                seq,
                gen_ts,
                rx_ts,
                hold_ns,
                tlvs,
            },
        )
}

/// Any valid datagram, UPDATE or ACK.
fn valid_datagram() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        update_fields().prop_map(|u| u.bytes()),
        ack_fields().prop_map(|a| a.bytes()),
    ]
}

/// A decoded packet must re-encode to exactly the bytes it came from.
fn assert_reencodes(p: &Packet<'_>, bytes: &[u8]) {
    let mut out = vec![0u8; bytes.len()];
    let n = match p {
        Packet::Update(u) => u.encode(&mut out),
        Packet::Ack(a) => a.encode(&mut out),
        Packet::Cookie(c) => c.encode(&mut out),
    };
    assert_eq!(n, Ok(bytes.len()));
    assert_eq!(out, bytes);
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn update_round_trips(f in update_fields()) {
        let bytes = f.bytes();
        prop_assert_eq!(bytes.len(), HEADER_LEN + f.payload.len());
        let decoded = Packet::decode(&bytes);
        prop_assert_eq!(decoded, Ok(Packet::Update(f.packet())));
        prop_assert_eq!(Update::decode(&bytes), Ok(f.packet()));
        prop_assert_eq!(f.packet().is_probe(), f.flags == FLAG_PROBE);
        assert_reencodes(&decoded.unwrap(), &bytes);
    }

    #[test]
    fn ack_round_trips(f in ack_fields()) {
        let fb = f.feedback();
        let bytes = f.bytes();
        prop_assert_eq!(bytes.len(), HEADER_LEN + fb.len());
        let a = Ack::decode(&bytes).unwrap();
        prop_assert_eq!(a.flags, f.flags);
        prop_assert_eq!(a.session, f.session);
        prop_assert_eq!(a.seq, f.seq);
        prop_assert_eq!(a.gen_ts, f.gen_ts);
        prop_assert_eq!(a.rx_ts, f.rx_ts);
        prop_assert_eq!(a.hold_ns, f.hold_ns);
        prop_assert_eq!(a.feedback, &fb[..]);
        prop_assert_eq!(a.is_stale(), f.flags == FLAG_STALE);
        prop_assert_eq!(a.feedback_items().collect::<Vec<_>>(), f.items());
        prop_assert_eq!(Packet::decode(&bytes), Ok(Packet::Ack(a)));
        assert_reencodes(&Packet::Ack(a), &bytes);
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..200)) {
        if let Ok(p) = Packet::decode(&bytes) {
            assert_reencodes(&p, &bytes);
        }
        let _ = Update::decode(&bytes);
        let _ = Ack::decode(&bytes);
    }

    /// Random bytes almost never get past the magic; this starts from a plausible header
    /// (right magic, version and a type) so the later checks and the TLV parser are exercised.
    #[test]
    fn plausible_headers_never_panic(
        ty in 0u8..4,
        flags in prop_oneof![Just(0u8), Just(1u8), any::<u8>()],
        rest in prop::collection::vec(any::<u8>(), 40..120),
        fix_length in any::<bool>(),
    ) {
        let mut bytes = vec![b'A', b'C', 1, ty, flags, 0];
        bytes.extend_from_slice(&rest);
        if fix_length {
            let len = (bytes.len() - HEADER_LEN) as u16;
            bytes[6..8].copy_from_slice(&len.to_be_bytes());
        }
        match Packet::decode(&bytes) {
            Ok(p) => {
                assert_reencodes(&p, &bytes);
                if let Packet::Ack(a) = p {
                    // Validated feedback iterates to exactly the feedback area.
                    let total: usize = a.feedback_items().map(|i| 2 + i.value.len()).sum();
                    prop_assert_eq!(total, a.feedback.len());
                }
            }
            Err(e) => prop_assert!(
                !matches!(e, DecodeError::WrongType { .. }),
                "Packet::decode never reports WrongType: {:?}",
                e
            ),
        }
    }

    #[test]
    fn every_truncation_fails(bytes in valid_datagram(), cut in any::<prop::sample::Index>()) {
        let cut = cut.index(bytes.len()); // 0..len: strictly shorter
        let err = Packet::decode(&bytes[..cut]).unwrap_err();
        if cut < HEADER_LEN {
            prop_assert_eq!(err, DecodeError::Truncated { len: cut });
        } else {
            prop_assert_eq!(
                err,
                DecodeError::LengthMismatch {
                    declared: bytes.len() - HEADER_LEN,
                    actual: cut - HEADER_LEN
                }
            );
        }
    }

    #[test]
    fn flipped_magic_version_or_type_fails(
        bytes in valid_datagram(),
        at in 0usize..4,
        mask in 1u8..=255,
    ) {
        let mut bad = bytes.clone();
        bad[at] ^= mask;
        let new = bad[at];
        let result = Packet::decode(&bad);
        match at {
            0 | 1 => prop_assert_eq!(result, Err(DecodeError::BadMagic)),
            2 => prop_assert_eq!(result, Err(DecodeError::UnsupportedVersion(new))),
            _ if new == 0x01 || new == 0x02 => {
                // The flip turned one valid type into the other: the fixed part stays valid
                // (flag bit 0 is defined for both), so the datagram decodes as the other type,
                // unless an UPDATE payload is not a well-formed TLV list for an ACK.
                match (bytes[3], result) {
                    (0x01, Ok(Packet::Ack(_))) | (0x02, Ok(Packet::Update(_))) => {}
                    (0x01, Err(DecodeError::BadFeedback { .. })) => {}
                    (ty, r) => prop_assert!(false, "type {ty:#04x} -> {new:#04x}: {r:?}"),
                }
            }
            _ if new == 0x03 => {
                // Into a COOKIE: it defines no flag but AUTH and has no body.
                let body = bytes.len() - HEADER_LEN;
                match result {
                    Err(DecodeError::ReservedBits { flags, .. }) => prop_assert!(flags & 0x7f != 0),
                    Err(DecodeError::BadCookie { len }) => prop_assert_eq!(len, body),
                    Ok(Packet::Cookie(_)) => prop_assert!(body == 0 && bytes[4] == 0),
                    r => prop_assert!(false, "type -> COOKIE: {r:?}"),
                }
            }
            _ => prop_assert_eq!(result, Err(DecodeError::UnknownType(new))),
        }
    }

    #[test]
    fn undefined_flags_or_reserved_fail(
        bytes in valid_datagram(),
        extra_flags in any::<u8>(),
        reserved in any::<u8>(),
    ) {
        // Bits no type defines (PROBE/STALE 0x01, COOKIE 0x02 and AUTH 0x80 have their own
        // tests; MULTIPATH 0x04 is defined for UPDATE only); without AUTH the reserved byte must
        // be 0.
        let extra_flags = extra_flags & !if bytes[3] == 0x01 { 0x87 } else { 0x83 };
        prop_assume!(extra_flags != 0 || reserved != 0);
        let mut bad = bytes.clone();
        bad[4] |= extra_flags;
        bad[5] = reserved;
        prop_assert_eq!(
            Packet::decode(&bad),
            Err(DecodeError::ReservedBits { flags: bad[4], reserved })
        );
    }

    #[test]
    fn wrong_length_field_fails(bytes in valid_datagram(), declared in any::<u16>()) {
        let actual = bytes.len() - HEADER_LEN;
        prop_assume!(usize::from(declared) != actual);
        let mut bad = bytes.clone();
        bad[6..8].copy_from_slice(&declared.to_be_bytes());
        prop_assert_eq!(
            Packet::decode(&bad),
            Err(DecodeError::LengthMismatch { declared: declared.into(), actual })
        );
    }
}

proptest! {
    #![proptest_config(config())]

    /// Any value decodes to a report or an error, never a panic; what decodes satisfies the
    /// documented ranges and re-encodes to the value's version-1 prefix (with version byte 1).
    #[test]
    fn aggregation_report_decoder_is_total(value in prop::collection::vec(any::<u8>(), 0..40)) {
        match AggregationReport::decode(&value) {
            Ok(r) => {
                prop_assert!(value.len() >= AGGREGATION_LEN && value[0] != 0);
                prop_assert!(r.slot_ms > 0 && r.frames > 0 && r.level() >= 1.0);
                let again = r.encode();
                prop_assert_eq!(&again[1..], &value[1..AGGREGATION_LEN]);
            }
            Err(AggregationError::Truncated(n)) => prop_assert!(n < AGGREGATION_LEN),
            Err(_) => prop_assert!(value.len() >= AGGREGATION_LEN),
        }
    }

    #[test]
    fn aggregation_report_round_trips(
        slot in any::<u32>(),
        slot_ms in 1u16..,
        frames in 1u16..,
        level_256 in 256u16..,
        phy_kbps in any::<u32>(),
        delay_us in any::<u32>(),
    ) {
        let r = AggregationReport { slot, slot_ms, frames, level_256, phy_kbps, delay_us };
        prop_assert_eq!(AggregationReport::decode(&r.encode()), Ok(r));
    }
}
