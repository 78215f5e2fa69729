//! Wire format v1: UPDATE, ACK and COOKIE packets (specified byte for byte in `docs/PROTOCOL.md`).
//!
//! UPDATE and ACK share a 44-byte fixed part, all integers big-endian:
//!
//! ```text
//!  0      2      3      4      5      6             8
//!  +------+------+------+------+------+-------------+
//!  | "AC" | ver  | type |flags | rsvd |   length    |   length = payload (UPDATE) / feedback (ACK)
//!  +------+------+------+------+------+-------------+
//!  |                 session id (u64)               |   8..16
//!  |                 sequence   (u64)               |  16..24
//!  |     generation timestamp, source clock, ns     |  24..32  (ACK: echoed)
//!  | UPDATE: acked seq (u64) | ACK: monitor rx ns   |  32..40
//!  |  hold ns (u32; ACK: echoed)                    |  40..44
//!  +------------------------------------------------+
//!  | payload (UPDATE) / feedback TLVs (ACK)         |  44..
//! ```
//!
//! A third type, COOKIE, is the monitor's request that a new source prove its address: it has
//! the same fixed part, with a 12-byte cookie in bytes 32..44 and no body. An UPDATE that echoes a
//! cookie (flag COOKIE) carries it in the first 12 bytes of its body, before the payload.
//!
//! Any packet may be *sealed* (flag AUTH): byte 5 then holds the key id and a 16-byte
//! authentication tag follows the body (`length` does not count it). Sealing and checking seals
//! is [`crate::seal`]'s job; this module only frames them.
//!
//! Decoding borrows from the input and never panics: every malformed input maps to a
//! [`DecodeError`]. Encoding writes into a caller-provided buffer.

use thiserror::Error;

/// The two magic bytes that open every ACP packet (ASCII "AC").
pub const MAGIC: [u8; 2] = *b"AC";
/// The only wire version this crate speaks.
pub const VERSION: u8 = 1;
/// Size of the fixed part every packet type shares.
pub const HEADER_LEN: usize = 44;
/// Largest body (payload or feedback) the 16-bit length field can describe.
pub const MAX_BODY: usize = u16::MAX as usize;
/// Largest payload that fits an IPv4 UDP datagram together with the header. Larger bodies, up
/// to [`MAX_BODY`], are valid on the wire but only travel over IPv6 (or loopback).
pub const MAX_IPV4_PAYLOAD: usize = 65_507 - HEADER_LEN;

/// Packet type codes (byte 3).
pub(crate) const TYPE_UPDATE: u8 = 0x01;
pub(crate) const TYPE_ACK: u8 = 0x02;
pub(crate) const TYPE_COOKIE: u8 = 0x03;

/// Size of an address-validation cookie.
pub const COOKIE_LEN: usize = 12;
/// Size of a seal's authentication tag.
pub const TAG_LEN: usize = 16;

/// UPDATE flag: the update is an initialisation probe (stop-and-wait phase).
pub const FLAG_PROBE: u8 = 0x01;
/// UPDATE flag: the body starts with a cookie the monitor issued ([`COOKIE_LEN`] bytes).
pub const FLAG_COOKIE: u8 = 0x02;
/// UPDATE flag (multipath extension, `docs/PROTOCOL.md`): the update belongs to a session sent
/// over several paths; the monitor keys it by session id alone and answers each update on the
/// path it came from.
pub const FLAG_MULTIPATH: u8 = 0x04;
/// Any packet: sealed; byte 5 is the key id and a [`TAG_LEN`]-byte tag follows the body.
pub const FLAG_AUTH: u8 = 0x80;
/// ACK flag: the monitor had already received a fresher update of this session, so this one was
/// not delivered to the application (it arrived out of sequence).
pub const FLAG_STALE: u8 = 0x01;

/// Why a datagram is not a valid ACP packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum DecodeError {
    /// Shorter than the fixed header.
    #[error("datagram too short: {len} bytes, header needs {HEADER_LEN}")]
    Truncated {
        /// Bytes received.
        len: usize,
    },
    /// The first two bytes are not "AC".
    #[error("bad magic bytes")]
    BadMagic,
    /// A version this implementation does not speak.
    #[error("unsupported version {0}")]
    UnsupportedVersion(u8),
    /// A type byte that is not UPDATE, ACK or COOKIE.
    #[error("unknown packet type {0:#04x}")]
    UnknownType(u8),
    /// A flag bit version 1 leaves undefined, or a nonzero reserved byte on an unsealed packet
    /// (a sealed packet's byte 5 is its key id).
    #[error("reserved bits set (flags {flags:#04x}, reserved {reserved:#04x})")]
    ReservedBits {
        /// The flags byte.
        flags: u8,
        /// The reserved byte.
        reserved: u8,
    },
    /// The length field disagrees with the datagram's size.
    #[error("length field says {declared} bytes follow the header, datagram has {actual}")]
    LengthMismatch {
        /// Value of the length field.
        declared: usize,
        /// Bytes actually following the header.
        actual: usize,
    },
    /// A feedback TLV runs past the end of the ACK.
    #[error("feedback TLV at offset {offset} overruns the ACK")]
    BadFeedback {
        /// Offset of the bad TLV within the feedback area.
        offset: usize,
    },
    /// A COOKIE with a body, or an UPDATE whose body is too short for the cookie it announces.
    #[error("cookie framing: body of {len} bytes")]
    BadCookie {
        /// Bytes following the header (before any tag).
        len: usize,
    },
    /// A valid packet of another type arrived where this one was expected.
    #[error("expected {expected}, got {got}")]
    WrongType {
        /// What the caller asked for.
        expected: &'static str,
        /// What the datagram holds.
        got: &'static str,
    },
}

impl DecodeError {
    /// The name of the check that failed, as in `docs/PROTOCOL.md` ("Decoding rules"), in
    /// snake case: `truncated`, `bad_magic`, `unsupported_version`, `unknown_type`,
    /// `reserved_bits`, `length_mismatch`, `bad_feedback`, `bad_cookie`, `wrong_type`.
    pub fn reason(&self) -> &'static str {
        match self {
            DecodeError::Truncated { .. } => "truncated",
            DecodeError::BadMagic => "bad_magic",
            DecodeError::UnsupportedVersion(_) => "unsupported_version",
            DecodeError::UnknownType(_) => "unknown_type",
            DecodeError::ReservedBits { .. } => "reserved_bits",
            DecodeError::LengthMismatch { .. } => "length_mismatch",
            DecodeError::BadFeedback { .. } => "bad_feedback",
            DecodeError::BadCookie { .. } => "bad_cookie",
            DecodeError::WrongType { .. } => "wrong_type",
        }
    }
}

/// Why a packet could not be encoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum EncodeError {
    /// The payload or feedback exceeds [`MAX_BODY`].
    #[error("body of {0} bytes exceeds the maximum of {MAX_BODY}")]
    TooLarge(usize),
    /// A feedback value longer than 255 bytes.
    #[error("feedback value of {0} bytes exceeds 255")]
    FeedbackValueTooLong(usize),
    /// An ACK's feedback area is not a well-formed TLV sequence.
    #[error("malformed feedback TLVs")]
    BadFeedback,
    /// The output buffer is smaller than the encoded packet.
    #[error("output buffer of {have} bytes, packet needs {need}")]
    BufferTooSmall {
        /// Bytes needed.
        need: usize,
        /// Bytes available.
        have: usize,
    },
    /// A flag outside the packet type's defined flags.
    #[error("undefined flags {0:#04x}")]
    UndefinedFlags(u8),
    /// A reply sealed with the key of a packet whose sequence and generation timestamp it does
    /// not echo.
    #[error("the reply does not echo the sequence and generation time of the packet it answers")]
    NotAReply,
}

/// A status update from a source to its monitor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Update<'a> {
    /// `FLAG_PROBE`, `FLAG_MULTIPATH`, both or 0 (decoded packets also show `FLAG_COOKIE` and
    /// `FLAG_AUTH` as received).
    pub flags: u8,
    /// Random id chosen by the source for this session.
    pub session: u64,
    /// Sequence number, starting at 1, increasing by one per update.
    pub seq: u64,
    /// Generation time of the payload, ns on the source's clock.
    pub gen_ts: u64,
    /// Highest sequence the source had seen ACKed in sequence when it sent this (0 = none).
    pub acked_seq: u64,
    /// Time between generation and transmission, ns (saturates at `u32::MAX`).
    pub hold_ns: u32,
    /// A cookie the monitor issued, echoed to prove the source's address (sets `FLAG_COOKIE`).
    pub cookie: Option<[u8; COOKIE_LEN]>,
    /// Application payload.
    pub payload: &'a [u8],
}

/// The monitor's acknowledgement of one update.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ack<'a> {
    /// `FLAG_STALE` or 0 (decoded packets also show `FLAG_AUTH` as received).
    pub flags: u8,
    /// Session id copied from the update.
    pub session: u64,
    /// Sequence number of the acknowledged update.
    pub seq: u64,
    /// The update's generation timestamp, echoed.
    pub gen_ts: u64,
    /// When the monitor received the update, ns on the monitor's clock.
    pub rx_ts: u64,
    /// The update's hold time, echoed.
    pub hold_ns: u32,
    /// Receiver feedback: a sequence of TLVs (see [`FeedbackItem`]), validated on decode.
    pub feedback: &'a [u8],
}

/// The monitor's answer to an UPDATE that must first prove its address: echo `cookie` in the
/// next updates. The update it answers was not delivered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cookie {
    /// 0 (decoded packets also show `FLAG_AUTH` as received).
    pub flags: u8,
    /// Session id copied from the update.
    pub session: u64,
    /// Sequence number of the update it answers.
    pub seq: u64,
    /// The update's generation timestamp, echoed.
    pub gen_ts: u64,
    /// The cookie to echo.
    pub cookie: [u8; COOKIE_LEN],
}

/// Any packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Packet<'a> {
    /// An UPDATE.
    Update(Update<'a>),
    /// An ACK.
    Ack(Ack<'a>),
    /// A COOKIE.
    Cookie(Cookie),
}

/// One receiver-feedback element carried in an ACK: `kind` (1 byte), `len` (1 byte), `value`.
///
/// Kind [`FEEDBACK_AGGREGATION`] carries an [`AggregationReport`]. Unknown kinds are passed to
/// the controller, which ignores what it does not understand.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FeedbackItem<'a> {
    /// What the value means.
    pub kind: u8,
    /// Up to 255 bytes.
    pub value: &'a [u8],
}

/// Feedback kind: WiFi A-MPDU aggregation level measured at the receiver, one
/// [`AggregationReport`] per measurement slot.
pub const FEEDBACK_AGGREGATION: u8 = 0x01;

/// Version of the [`AggregationReport`] value format this crate writes.
pub const AGGREGATION_VERSION: u8 = 1;
/// Length of a version-1 [`AggregationReport`] value; later versions may only append fields.
pub const AGGREGATION_LEN: usize = 19;

/// Byte ranges of the fields of an [`AggregationReport`] value (named once, used by encode and
/// decode alike).
mod aggregation_field {
    use std::ops::Range;
    pub const VERSION: usize = 0;
    pub const SLOT: Range<usize> = 1..5;
    pub const SLOT_MS: Range<usize> = 5..7;
    pub const FRAMES: Range<usize> = 7..9;
    pub const LEVEL: Range<usize> = 9..11;
    pub const PHY_KBPS: Range<usize> = 11..15;
    pub const DELAY_US: Range<usize> = 15..19;
}

/// The value of a [`FEEDBACK_AGGREGATION`] element: what a receiver measured over one slot.
///
/// Version 1 is 19 bytes, big-endian (see `docs/PROTOCOL.md`, "Aggregation feedback"):
///
/// ```text
///  0        1          5           7        9             11           15           19
///  +--------+----------+-----------+--------+-------------+------------+------------+
///  |version |  slot id | slot ms   | frames | level×256   | PHY kbit/s | delay µs   |
///  +--------+----------+-----------+--------+-------------+------------+------------+
/// ```
///
/// A receiver repeats the report of its last finished slot on every ACK, so a controller keys
/// on `slot` and uses each slot once.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AggregationReport {
    /// Slot id, increasing by one per slot (wraps).
    pub slot: u32,
    /// Slot length in ms (nonzero).
    pub slot_ms: u16,
    /// Frames received in the slot (nonzero: a slot without frames is not reported).
    pub frames: u16,
    /// Mean MPDUs per frame over the slot, μ_N, in units of 1/256 (at least 256, i.e. one).
    pub level_256: u16,
    /// Mean PHY rate μ_R = 1/E[1/R] of the slot's frames, kbit/s; 0 = not measured.
    pub phy_kbps: u32,
    /// Mean one-way delay at the access point over the slot, µs; 0 = not measured.
    pub delay_us: u32,
}

/// Why a [`FEEDBACK_AGGREGATION`] value was dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum AggregationError {
    /// Shorter than a version-1 report.
    #[error("aggregation report of {0} bytes, version 1 needs {AGGREGATION_LEN}")]
    Truncated(usize),
    /// Version 0 is not defined.
    #[error("aggregation report version 0")]
    BadVersion,
    /// A slot of 0 ms, a slot with no frames, or a mean level below one MPDU per frame.
    #[error("aggregation report out of range (slot {slot_ms} ms, {frames} frames, level {level_256}/256)")]
    OutOfRange {
        /// The slot length field.
        slot_ms: u16,
        /// The frame count field.
        frames: u16,
        /// The level field.
        level_256: u16,
    },
}

impl AggregationReport {
    /// The mean aggregation level μ_N (MPDUs per frame).
    pub fn level(&self) -> f64 {
        f64::from(self.level_256) / 256.0
    }

    /// μ_N rounded to the nearest 1/256, saturating at the field's range (1 to 255.996).
    pub fn level_field(level: f64) -> u16 {
        (level * 256.0).round().clamp(256.0, f64::from(u16::MAX)) as u16
    }

    /// The mean PHY rate in bit/s, if the receiver measured it.
    pub fn phy_rate(&self) -> Option<f64> {
        (self.phy_kbps > 0).then(|| f64::from(self.phy_kbps) * 1e3)
    }

    /// The mean delay in seconds, if the receiver measured it.
    pub fn delay(&self) -> Option<f64> {
        (self.delay_us > 0).then(|| f64::from(self.delay_us) * 1e-6)
    }

    /// The version-1 value (always [`AGGREGATION_LEN`] bytes).
    pub fn encode(&self) -> [u8; AGGREGATION_LEN] {
        use aggregation_field as f;
        let mut out = [0u8; AGGREGATION_LEN];
        out[f::VERSION] = AGGREGATION_VERSION;
        out[f::SLOT].copy_from_slice(&self.slot.to_be_bytes());
        out[f::SLOT_MS].copy_from_slice(&self.slot_ms.to_be_bytes());
        out[f::FRAMES].copy_from_slice(&self.frames.to_be_bytes());
        out[f::LEVEL].copy_from_slice(&self.level_256.to_be_bytes());
        out[f::PHY_KBPS].copy_from_slice(&self.phy_kbps.to_be_bytes());
        out[f::DELAY_US].copy_from_slice(&self.delay_us.to_be_bytes());
        out
    }

    /// Reads a report. Versions above 1 are read by their version-1 prefix (later versions only
    /// append fields); never panics.
    pub fn decode(value: &[u8]) -> Result<Self, AggregationError> {
        use aggregation_field as f;
        if value.len() < AGGREGATION_LEN {
            return Err(AggregationError::Truncated(value.len()));
        }
        if value[f::VERSION] == 0 {
            return Err(AggregationError::BadVersion);
        }
        let u16_at =
            |r: std::ops::Range<usize>| u16::from_be_bytes([value[r.start], value[r.start + 1]]);
        let report = AggregationReport {
            slot: be_u32(value, f::SLOT.start),
            slot_ms: u16_at(f::SLOT_MS),
            frames: u16_at(f::FRAMES),
            level_256: u16_at(f::LEVEL),
            phy_kbps: be_u32(value, f::PHY_KBPS.start),
            delay_us: be_u32(value, f::DELAY_US.start),
        };
        if report.slot_ms == 0 || report.frames == 0 || report.level_256 < 256 {
            return Err(AggregationError::OutOfRange {
                slot_ms: report.slot_ms,
                frames: report.frames,
                level_256: report.level_256,
            });
        }
        Ok(report)
    }
}

fn be_u64(b: &[u8], at: usize) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[at..at + 8]);
    u64::from_be_bytes(a)
}

fn be_u32(b: &[u8], at: usize) -> u32 {
    let mut a = [0u8; 4];
    a.copy_from_slice(&b[at..at + 4]);
    u32::from_be_bytes(a)
}

/// The fields every packet has, read from a buffer already checked to hold `HEADER_LEN` bytes.
struct Fixed<'a> {
    kind: u8,
    flags: u8,
    session: u64,
    seq: u64,
    ts: u64,
    word4: u64,
    hold: u32,
    /// What follows the header, up to the tag of a sealed packet.
    body: &'a [u8],
}

fn decode_fixed(buf: &[u8]) -> Result<Fixed<'_>, DecodeError> {
    if buf.len() < HEADER_LEN {
        return Err(DecodeError::Truncated { len: buf.len() });
    }
    if buf[0..2] != MAGIC {
        return Err(DecodeError::BadMagic);
    }
    if buf[2] != VERSION {
        return Err(DecodeError::UnsupportedVersion(buf[2]));
    }
    let kind = buf[3];
    let defined = match kind {
        TYPE_UPDATE => FLAG_PROBE | FLAG_COOKIE | FLAG_MULTIPATH,
        TYPE_ACK => FLAG_STALE,
        TYPE_COOKIE => 0,
        other => return Err(DecodeError::UnknownType(other)),
    } | FLAG_AUTH;
    let (flags, reserved) = (buf[4], buf[5]);
    // A sealed packet's byte 5 is its key id.
    if flags & !defined != 0 || (reserved != 0 && flags & FLAG_AUTH == 0) {
        return Err(DecodeError::ReservedBits { flags, reserved });
    }
    let declared = usize::from(u16::from_be_bytes([buf[6], buf[7]]));
    let tag = if flags & FLAG_AUTH != 0 { TAG_LEN } else { 0 };
    let actual = (buf.len() - HEADER_LEN).saturating_sub(tag);
    if declared != actual || buf.len() < HEADER_LEN + tag {
        return Err(DecodeError::LengthMismatch { declared, actual });
    }
    let body = &buf[HEADER_LEN..HEADER_LEN + declared];
    let cookie_len = match kind {
        TYPE_UPDATE if flags & FLAG_COOKIE != 0 => COOKIE_LEN,
        _ => 0,
    };
    if (kind == TYPE_COOKIE && !body.is_empty()) || body.len() < cookie_len {
        return Err(DecodeError::BadCookie { len: body.len() });
    }
    Ok(Fixed {
        kind,
        flags,
        session: be_u64(buf, 8),
        seq: be_u64(buf, 16),
        ts: be_u64(buf, 24),
        word4: be_u64(buf, 32),
        hold: be_u32(buf, 40),
        body,
    })
}

/// Checks that `tlvs` is a well-formed sequence of feedback TLVs.
fn validate_feedback(tlvs: &[u8]) -> Result<(), DecodeError> {
    let mut at = 0;
    while at < tlvs.len() {
        let Some(&len) = tlvs.get(at + 1) else {
            return Err(DecodeError::BadFeedback { offset: at });
        };
        let end = at + 2 + usize::from(len);
        if end > tlvs.len() {
            return Err(DecodeError::BadFeedback { offset: at });
        }
        at = end;
    }
    Ok(())
}

impl<'a> Packet<'a> {
    /// Decodes one datagram.
    pub fn decode(buf: &'a [u8]) -> Result<Self, DecodeError> {
        let f = decode_fixed(buf)?;
        match f.kind {
            TYPE_UPDATE => {
                let (cookie, payload) = if f.flags & FLAG_COOKIE != 0 {
                    let (c, rest) = f.body.split_at(COOKIE_LEN);
                    (c.try_into().ok(), rest)
                } else {
                    (None, f.body)
                };
                Ok(Packet::Update(Update {
                    flags: f.flags,
                    session: f.session,
                    seq: f.seq,
                    gen_ts: f.ts,
                    acked_seq: f.word4,
                    hold_ns: f.hold,
                    cookie,
                    payload,
                }))
            }
            TYPE_ACK => {
                validate_feedback(f.body)?;
                Ok(Packet::Ack(Ack {
                    flags: f.flags,
                    session: f.session,
                    seq: f.seq,
                    gen_ts: f.ts,
                    rx_ts: f.word4,
                    hold_ns: f.hold,
                    feedback: f.body,
                }))
            }
            _ => {
                let mut cookie = [0u8; COOKIE_LEN];
                cookie[..8].copy_from_slice(&f.word4.to_be_bytes());
                cookie[8..].copy_from_slice(&f.hold.to_be_bytes());
                Ok(Packet::Cookie(Cookie {
                    flags: f.flags,
                    session: f.session,
                    seq: f.seq,
                    gen_ts: f.ts,
                    cookie,
                }))
            }
        }
    }

    fn type_name(&self) -> &'static str {
        match self {
            Packet::Update(_) => "UPDATE",
            Packet::Ack(_) => "ACK",
            Packet::Cookie(_) => "COOKIE",
        }
    }

    /// Whether the packet arrived sealed (flag AUTH).
    pub fn is_sealed(&self) -> bool {
        let flags = match self {
            Packet::Update(u) => u.flags,
            Packet::Ack(a) => a.flags,
            Packet::Cookie(c) => c.flags,
        };
        flags & FLAG_AUTH != 0
    }
}

/// Writes the fixed part and body; shared by both packet types.
#[allow(clippy::too_many_arguments)]
fn encode_fixed(
    out: &mut [u8],
    kind: u8,
    flags: u8,
    session: u64,
    seq: u64,
    ts: u64,
    word4: u64,
    hold: u32,
    prefix: &[u8],
    body: &[u8],
) -> Result<usize, EncodeError> {
    let len = prefix.len() + body.len();
    if len > MAX_BODY {
        return Err(EncodeError::TooLarge(len));
    }
    let need = HEADER_LEN + len;
    let Some(out) = out.get_mut(..need) else {
        return Err(EncodeError::BufferTooSmall {
            need,
            have: out.len(),
        });
    };
    out[0..2].copy_from_slice(&MAGIC);
    out[2] = VERSION;
    out[3] = kind;
    out[4] = flags;
    out[5] = 0;
    // At most MAX_BODY = u16::MAX, checked above.
    out[6..8].copy_from_slice(&(len as u16).to_be_bytes());
    out[8..16].copy_from_slice(&session.to_be_bytes());
    out[16..24].copy_from_slice(&seq.to_be_bytes());
    out[24..32].copy_from_slice(&ts.to_be_bytes());
    out[32..40].copy_from_slice(&word4.to_be_bytes());
    out[40..44].copy_from_slice(&hold.to_be_bytes());
    out[HEADER_LEN..HEADER_LEN + prefix.len()].copy_from_slice(prefix);
    out[HEADER_LEN + prefix.len()..].copy_from_slice(body);
    Ok(need)
}

impl<'a> Update<'a> {
    /// Decodes a datagram that must be an UPDATE.
    pub fn decode(buf: &'a [u8]) -> Result<Self, DecodeError> {
        match Packet::decode(buf)? {
            Packet::Update(u) => Ok(u),
            other => Err(DecodeError::WrongType {
                expected: "UPDATE",
                got: other.type_name(),
            }),
        }
    }

    /// Encoded size in bytes (unsealed).
    pub fn encoded_len(&self) -> usize {
        HEADER_LEN + self.cookie.map_or(0, |_| COOKIE_LEN) + self.payload.len()
    }

    /// Writes the packet, unsealed, to the front of `out`; returns its length. `FLAG_COOKIE` is
    /// set from `cookie`; a seal is added by [`crate::seal`].
    pub fn encode(&self, out: &mut [u8]) -> Result<usize, EncodeError> {
        let flags = self.flags & !FLAG_COOKIE;
        if flags & !(FLAG_PROBE | FLAG_MULTIPATH) != 0
            || (self.flags & FLAG_COOKIE != 0 && self.cookie.is_none())
        {
            return Err(EncodeError::UndefinedFlags(self.flags));
        }
        let cookie = self.cookie.as_ref().map_or(&[][..], |c| &c[..]);
        encode_fixed(
            out,
            TYPE_UPDATE,
            flags | if cookie.is_empty() { 0 } else { FLAG_COOKIE },
            self.session,
            self.seq,
            self.gen_ts,
            self.acked_seq,
            self.hold_ns,
            cookie,
            self.payload,
        )
    }

    /// Whether this update is an initialisation probe.
    pub fn is_probe(&self) -> bool {
        self.flags & FLAG_PROBE != 0
    }

    /// Whether this update belongs to a multipath session (flag MULTIPATH).
    pub fn is_multipath(&self) -> bool {
        self.flags & FLAG_MULTIPATH != 0
    }
}

impl<'a> Ack<'a> {
    /// Decodes a datagram that must be an ACK.
    pub fn decode(buf: &'a [u8]) -> Result<Self, DecodeError> {
        match Packet::decode(buf)? {
            Packet::Ack(a) => Ok(a),
            other => Err(DecodeError::WrongType {
                expected: "ACK",
                got: other.type_name(),
            }),
        }
    }

    /// Encoded size in bytes.
    pub fn encoded_len(&self) -> usize {
        HEADER_LEN + self.feedback.len()
    }

    /// Writes the packet to the front of `out`; returns its length. `feedback` must hold
    /// well-formed TLVs (build it with [`encode_feedback`]).
    pub fn encode(&self, out: &mut [u8]) -> Result<usize, EncodeError> {
        if self.flags & !FLAG_STALE != 0 {
            return Err(EncodeError::UndefinedFlags(self.flags));
        }
        validate_feedback(self.feedback).map_err(|_| EncodeError::BadFeedback)?;
        encode_fixed(
            out,
            TYPE_ACK,
            self.flags,
            self.session,
            self.seq,
            self.gen_ts,
            self.rx_ts,
            self.hold_ns,
            &[],
            self.feedback,
        )
    }

    /// Whether the monitor found this update out of sequence.
    pub fn is_stale(&self) -> bool {
        self.flags & FLAG_STALE != 0
    }

    /// The feedback TLVs (already validated by [`Ack::decode`]).
    pub fn feedback_items(&self) -> FeedbackIter<'a> {
        FeedbackIter {
            rest: self.feedback,
        }
    }
}

impl Cookie {
    /// Decodes a datagram that must be a COOKIE.
    pub fn decode(buf: &[u8]) -> Result<Self, DecodeError> {
        match Packet::decode(buf)? {
            Packet::Cookie(c) => Ok(c),
            other => Err(DecodeError::WrongType {
                expected: "COOKIE",
                got: other.type_name(),
            }),
        }
    }

    /// Writes the packet, unsealed, to the front of `out`; returns its length ([`HEADER_LEN`]).
    pub fn encode(&self, out: &mut [u8]) -> Result<usize, EncodeError> {
        if self.flags != 0 {
            return Err(EncodeError::UndefinedFlags(self.flags));
        }
        let (word4, hold) = self.cookie.split_at(8);
        encode_fixed(
            out,
            TYPE_COOKIE,
            0,
            self.session,
            self.seq,
            self.gen_ts,
            u64::from_be_bytes(word4.try_into().expect("8 bytes")),
            u32::from_be_bytes(hold.try_into().expect("4 bytes")),
            &[],
            &[],
        )
    }
}

/// Iterator over the TLVs of an ACK's feedback area; stops at the first malformed element.
#[derive(Debug, Clone)]
pub struct FeedbackIter<'a> {
    rest: &'a [u8],
}

impl<'a> Iterator for FeedbackIter<'a> {
    type Item = FeedbackItem<'a>;
    fn next(&mut self) -> Option<Self::Item> {
        let (&kind, rest) = self.rest.split_first()?;
        let (&len, rest) = rest.split_first()?;
        let Some(value) = rest.get(..usize::from(len)) else {
            self.rest = &[];
            return None;
        };
        self.rest = &rest[value.len()..];
        Some(FeedbackItem { kind, value })
    }
}

/// Appends `items` as TLVs to `out`. A value longer than 255 bytes is an error, and then nothing
/// is appended.
pub fn encode_feedback(items: &[FeedbackItem<'_>], out: &mut Vec<u8>) -> Result<(), EncodeError> {
    if let Some(long) = items.iter().find(|i| i.value.len() > usize::from(u8::MAX)) {
        return Err(EncodeError::FeedbackValueTooLong(long.value.len()));
    }
    for item in items {
        out.push(item.kind);
        out.push(item.value.len() as u8); // checked above
        out.extend_from_slice(item.value);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample_update(payload: &[u8]) -> Update<'_> {
        Update {
            flags: FLAG_PROBE,
            session: 0x0102_0304_0506_0708,
            seq: 42,
            gen_ts: 1_000_000_007,
            acked_seq: 41,
            hold_ns: 1234,
            cookie: None,
            payload,
        }
    }

    #[test]
    fn update_round_trips() {
        let u = sample_update(b"hello");
        let mut buf = [0u8; 128];
        let n = u.encode(&mut buf).unwrap();
        assert_eq!(n, HEADER_LEN + 5);
        assert_eq!(Update::decode(&buf[..n]).unwrap(), u);
    }

    #[test]
    fn every_truncation_is_an_error_not_a_panic() {
        let u = sample_update(b"xyz");
        let mut buf = [0u8; 64];
        let n = u.encode(&mut buf).unwrap();
        for cut in 0..n {
            assert!(Packet::decode(&buf[..cut]).is_err(), "cut at {cut}");
        }
    }

    #[test]
    fn wrong_type_is_reported() {
        let a = Ack {
            flags: 0,
            session: 1,
            seq: 2,
            gen_ts: 3,
            rx_ts: 4,
            hold_ns: 5,
            feedback: &[],
        };
        let mut buf = [0u8; HEADER_LEN];
        a.encode(&mut buf).unwrap();
        assert_eq!(
            Update::decode(&buf),
            Err(DecodeError::WrongType {
                expected: "UPDATE",
                got: "ACK"
            })
        );
    }

    #[test]
    fn feedback_tlvs_round_trip_and_overruns_are_rejected() {
        let mut fb = Vec::new();
        let items = [
            FeedbackItem {
                kind: FEEDBACK_AGGREGATION,
                value: &[0, 12],
            },
            FeedbackItem {
                kind: 9,
                value: &[],
            },
        ];
        encode_feedback(&items, &mut fb).unwrap();
        let a = Ack {
            flags: FLAG_STALE,
            session: 7,
            seq: 8,
            gen_ts: 9,
            rx_ts: 10,
            hold_ns: 0,
            feedback: &fb,
        };
        let mut buf = vec![0u8; a.encoded_len()];
        a.encode(&mut buf).unwrap();
        let back = Ack::decode(&buf).unwrap();
        assert_eq!(back.feedback_items().collect::<Vec<_>>(), items);
        // Claim a 5-byte value where only 4 bytes of feedback follow.
        buf[HEADER_LEN + 1] = 5;
        assert_eq!(
            Ack::decode(&buf),
            Err(DecodeError::BadFeedback { offset: 0 })
        );
    }

    #[test]
    fn aggregation_report_layout_and_rejections() {
        let r = AggregationReport {
            slot: 0x0102_0304,
            slot_ms: 500,
            frames: 40,
            level_256: 32 * 256 + 128,
            phy_kbps: 433_300,
            delay_us: 1_250,
        };
        let v = r.encode();
        // Independent of the encoder: the bytes as docs/PROTOCOL.md lays them out.
        assert_eq!(
            v,
            [
                1, 1, 2, 3, 4, 0x01, 0xf4, 0, 40, 0x20, 0x80, 0x00, 0x06, 0x9c, 0x94, 0, 0, 0x04,
                0xe2
            ]
        );
        assert_eq!(AggregationReport::decode(&v), Ok(r));
        assert_eq!(r.level(), 32.5);
        assert_eq!(r.phy_rate(), Some(433.3e6));
        assert_eq!(r.delay(), Some(1.25e-3));
        // A later version with an appended field reads as its version-1 prefix.
        let mut v2 = v.to_vec();
        v2[0] = 2;
        v2.extend_from_slice(&[9, 9]);
        assert_eq!(AggregationReport::decode(&v2), Ok(r));
        for cut in 0..AGGREGATION_LEN {
            assert_eq!(
                AggregationReport::decode(&v[..cut]),
                Err(AggregationError::Truncated(cut))
            );
        }
        let mut bad = v;
        bad[0] = 0;
        assert_eq!(
            AggregationReport::decode(&bad),
            Err(AggregationError::BadVersion)
        );
        for (field, at) in [("slot ms", 5), ("frames", 7), ("level", 9)] {
            let mut bad = v;
            bad[at] = 0;
            bad[at + 1] = 0;
            assert!(
                matches!(
                    AggregationReport::decode(&bad),
                    Err(AggregationError::OutOfRange { .. })
                ),
                "{field}"
            );
        }
        assert_eq!(AggregationReport::level_field(0.2), 256);
        assert_eq!(AggregationReport::level_field(31.999), 8192);
        assert_eq!(AggregationReport::level_field(1e9), u16::MAX);
    }

    #[test]
    fn encoders_refuse_what_the_decoder_would_reject() {
        let a = Ack {
            flags: 0,
            session: 1,
            seq: 1,
            gen_ts: 0,
            rx_ts: 0,
            hold_ns: 0,
            feedback: &[0x01],
        };
        assert_eq!(a.encode(&mut [0u8; 64]), Err(EncodeError::BadFeedback));
        let mut out = vec![];
        let long = [0u8; 256];
        let items = [
            FeedbackItem {
                kind: 1,
                value: &[1],
            },
            FeedbackItem {
                kind: 2,
                value: &long,
            },
        ];
        assert_eq!(
            encode_feedback(&items, &mut out),
            Err(EncodeError::FeedbackValueTooLong(256))
        );
        assert!(out.is_empty());
    }

    #[test]
    fn largest_body_round_trips() {
        let payload = vec![7u8; MAX_BODY];
        let u = sample_update(&payload);
        let mut buf = vec![0u8; u.encoded_len()];
        u.encode(&mut buf).unwrap();
        assert_eq!(Update::decode(&buf).unwrap().payload.len(), MAX_BODY);
        let too_big = vec![7u8; MAX_BODY + 1];
        let mut buf = vec![0u8; HEADER_LEN + MAX_BODY + 1];
        assert_eq!(
            sample_update(&too_big).encode(&mut buf),
            Err(EncodeError::TooLarge(MAX_BODY + 1))
        );
    }

    #[test]
    fn undefined_flags_are_refused_on_encode() {
        let mut u = sample_update(&[]);
        u.flags = 0x80;
        assert_eq!(
            u.encode(&mut [0u8; 64]),
            Err(EncodeError::UndefinedFlags(0x80))
        );
    }

    #[test]
    fn small_buffer_is_reported() {
        let u = sample_update(b"abc");
        assert_eq!(
            u.encode(&mut [0u8; 10]),
            Err(EncodeError::BufferTooSmall { need: 47, have: 10 })
        );
    }
}
