//! Optional authentication: pre-shared keys, per-session keys and sealed packets
//! (`docs/PROTOCOL.md`, "Authentication").
//!
//! A deployment shares one or more 32-byte keys, each with a one-byte id ([`Keyring`]). A
//! session's key is derived from the pre-shared key and the session id with HKDF-SHA256, so no
//! two sessions share a key. Every packet of a sealed session carries flag AUTH, its key id in
//! byte 5 and a 16-byte tag after its body: XChaCha20-Poly1305 over an empty plaintext, with the
//! whole packet (header and body) as associated data. Packets are authenticated, not encrypted.
//!
//! The 24-byte nonce is built from the header, so nothing extra travels: the sequence and the
//! generation timestamp (bytes 16..32), the type byte and bytes 33..40. It never repeats under
//! one session key: a source sends each sequence once; a monitor gives each ACK its own rx time
//! (bytes 32..40); the COOKIEs a monitor sends for one update are identical packets.
//!
//! XChaCha20-Poly1305 is ChaCha20-Poly1305 under a subkey, HChaCha20 of the key and the first 16
//! nonce bytes. An update and every reply to it (ACK or COOKIE) echo the same sequence and
//! generation timestamp, so they share that subkey: [`SessionCipher::open`] returns it as a
//! [`PacketKey`] and the monitor seals its reply with it, one HChaCha20 per update instead of two.

use chacha20::{hchacha, R20};
use chacha20poly1305::aead::{AeadInOut, KeyInit};
use chacha20poly1305::{ChaCha20Poly1305, Key, Nonce, Tag};
use hkdf::Hkdf;
use sha2::Sha256;
use thiserror::Error;

use crate::wire::{EncodeError, FLAG_AUTH, HEADER_LEN, TAG_LEN};

/// Size of a pre-shared key.
pub const KEY_LEN: usize = 32;

/// HKDF salt of the session-key derivation (fixed, so both ends agree without negotiation).
const KDF_SALT: &[u8] = b"ACP v1 session key";

/// 32 secret bytes; `Debug` does not show them.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(pub [u8; KEY_LEN]);

impl Secret {
    /// 32 bytes from the operating system's random source.
    pub fn random() -> Secret {
        let mut key = [0u8; KEY_LEN];
        // Without an entropy source no secret can be made; there is nothing to fall back on.
        getrandom::fill(&mut key).expect("the operating system's random source failed");
        Secret(key)
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret(..)")
    }
}

/// A pre-shared key and its id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Psk {
    /// Carried in byte 5 of every sealed packet.
    pub id: u8,
    /// The key.
    pub key: Secret,
}

/// The pre-shared keys a monitor accepts; a source seals with the first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Keyring {
    keys: Vec<Psk>,
}

/// Why a key file could not be read.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum KeyFileError {
    /// A line that is not `ID HEX`.
    #[error("line {line}: expected `ID KEY` (a key id 0-255 and 64 hex digits)")]
    Syntax {
        /// 1-based line number.
        line: usize,
    },
    /// Two keys with one id.
    #[error("line {line}: key id {id} appears twice")]
    DuplicateId {
        /// 1-based line number.
        line: usize,
        /// The id.
        id: u8,
    },
    /// No key at all.
    #[error("no key in the file")]
    Empty,
}

impl Keyring {
    /// A keyring of the given keys (at least one; ids distinct).
    pub fn new(keys: Vec<Psk>) -> Result<Keyring, KeyFileError> {
        if keys.is_empty() {
            return Err(KeyFileError::Empty);
        }
        for (i, k) in keys.iter().enumerate() {
            if keys[..i].iter().any(|o| o.id == k.id) {
                return Err(KeyFileError::DuplicateId {
                    line: i + 1,
                    id: k.id,
                });
            }
        }
        Ok(Keyring { keys })
    }

    /// Parses a key file: one key per line as `ID HEX` (id 0–255, 64 hex digits); blank lines
    /// and lines starting with `#` are ignored.
    pub fn parse(text: &str) -> Result<Keyring, KeyFileError> {
        let mut keys = Vec::new();
        for (i, raw) in text.lines().enumerate() {
            let line = raw.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let syntax = KeyFileError::Syntax { line: i + 1 };
            let mut words = line.split_whitespace();
            let (Some(id), Some(hex), None) = (words.next(), words.next(), words.next()) else {
                return Err(syntax);
            };
            let id: u8 = id.parse().map_err(|_| syntax.clone())?;
            let key = parse_hex_key(hex).ok_or(syntax)?;
            if keys.iter().any(|k: &Psk| k.id == id) {
                return Err(KeyFileError::DuplicateId { line: i + 1, id });
            }
            keys.push(Psk {
                id,
                key: Secret(key),
            });
        }
        Keyring::new(keys)
    }

    /// The line a key file holds for `psk`.
    pub fn line(psk: &Psk) -> String {
        let hex: String = psk.key.0.iter().map(|b| format!("{b:02x}")).collect();
        format!("{} {hex}", psk.id)
    }

    /// The key with id `id`.
    pub fn get(&self, id: u8) -> Option<&Psk> {
        self.keys.iter().find(|k| k.id == id)
    }

    /// The key sources seal with (the file's first).
    pub fn first(&self) -> &Psk {
        &self.keys[0]
    }
}

fn parse_hex_key(hex: &str) -> Option<[u8; KEY_LEN]> {
    if hex.len() != 2 * KEY_LEN || !hex.is_ascii() {
        return None;
    }
    let mut key = [0u8; KEY_LEN];
    for (i, b) in key.iter_mut().enumerate() {
        *b = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).ok()?;
    }
    Some(key)
}

/// Why a sealed packet was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum AuthError {
    /// Not sealed, where a seal is required.
    #[error("packet is not sealed")]
    Unsealed,
    /// Sealed, where no key is configured.
    #[error("packet is sealed but no key is configured")]
    Unexpected,
    /// Sealed with a key id this end does not have.
    #[error("unknown key id {0}")]
    UnknownKey(u8),
    /// The tag does not match: forged or modified.
    #[error("authentication tag mismatch")]
    BadTag,
    /// A sealed session's first update came over a stream connection, which cannot carry the
    /// cookie that tells a new session from a replayed one.
    #[error("a sealed session cannot start over a stream connection")]
    StreamStart,
}

impl AuthError {
    /// Short name for counters: `unsealed`, `unexpected_seal`, `unknown_key`, `bad_tag`,
    /// `stream_start`.
    pub fn reason(&self) -> &'static str {
        match self {
            AuthError::Unsealed => "unsealed",
            AuthError::Unexpected => "unexpected_seal",
            AuthError::UnknownKey(_) => "unknown_key",
            AuthError::BadTag => "bad_tag",
            AuthError::StreamStart => "stream_start",
        }
    }
}

/// The key of one session, ready to seal and open its packets.
#[derive(Clone)]
pub struct SessionCipher {
    key_id: u8,
    key: Key,
}

impl std::fmt::Debug for SessionCipher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionCipher")
            .field("key_id", &self.key_id)
            .finish_non_exhaustive()
    }
}

/// The session key's bytes: HKDF-SHA256 with salt "ACP v1 session key", the pre-shared key as
/// input keying material and `key id ‖ session id` (9 bytes) as info.
pub fn derive(psk: &Psk, session: u64) -> [u8; KEY_LEN] {
    let mut info = [0u8; 9];
    info[0] = psk.id;
    info[1..].copy_from_slice(&session.to_be_bytes());
    let mut okm = [0u8; KEY_LEN];
    Hkdf::<Sha256>::new(Some(KDF_SALT), &psk.key.0)
        .expand(&info, &mut okm)
        .expect("32 bytes is a valid HKDF-SHA256 output length");
    okm
}

/// Bytes 16..32 of a header (sequence ‖ generation timestamp): the first 16 nonce bytes, which
/// select the XChaCha20 subkey.
fn subkey_input(header: &[u8]) -> [u8; 16] {
    let mut n = [0u8; 16];
    n.copy_from_slice(&header[16..32]);
    n
}

/// The last 8 nonce bytes of the packet whose header is `header`: the type byte and bytes 33..40
/// (the low seven bytes of the acked sequence or rx time, or the cookie's bytes 1..8), as the
/// ChaCha20-Poly1305 nonce `0x00000000 ‖ those 8 bytes`.
fn packet_nonce(header: &[u8]) -> Nonce {
    let mut n = [0u8; 12];
    n[4] = header[3];
    n[5..12].copy_from_slice(&header[33..40]);
    Nonce::from(n)
}

/// Checks that `buf` can take a tag after `buf[..len]`, then sets flag AUTH and `key_id`.
fn prepare_seal(buf: &mut [u8], len: usize, key_id: u8) -> Result<usize, EncodeError> {
    let need = len + TAG_LEN;
    if buf.len() < need || len < HEADER_LEN {
        return Err(EncodeError::BufferTooSmall {
            need,
            have: buf.len(),
        });
    }
    buf[4] |= FLAG_AUTH;
    buf[5] = key_id;
    Ok(need)
}

impl SessionCipher {
    /// The key of `session` under `psk`.
    pub fn new(psk: &Psk, session: u64) -> SessionCipher {
        SessionCipher {
            key_id: psk.id,
            key: Key::from(derive(psk, session)),
        }
    }

    /// The id of the pre-shared key it derives from.
    pub fn key_id(&self) -> u8 {
        self.key_id
    }

    /// The key of every packet whose bytes 16..32 equal those of `header`.
    fn packet_key(&self, header: &[u8]) -> PacketKey {
        let input = subkey_input(header);
        PacketKey {
            key_id: self.key_id,
            input,
            aead: ChaCha20Poly1305::new(&hchacha::<R20>(&self.key, &input.into())),
        }
    }

    /// Seals the unsealed packet in `buf[..len]`: sets flag AUTH and the key id, appends the tag.
    /// Returns the sealed length.
    pub fn seal(&self, buf: &mut [u8], len: usize) -> Result<usize, EncodeError> {
        prepare_seal(buf, len, self.key_id)?;
        self.packet_key(buf).tag(buf, len)
    }

    /// Checks the seal of `datagram`, which [`crate::wire::Packet::decode`] accepted as sealed.
    /// Returns the key that seals the replies to it.
    pub fn open(&self, datagram: &[u8]) -> Result<PacketKey, AuthError> {
        let Some(split) = datagram.len().checked_sub(TAG_LEN) else {
            return Err(AuthError::BadTag);
        };
        if split < HEADER_LEN || datagram[4] & FLAG_AUTH == 0 {
            return Err(AuthError::Unsealed);
        }
        if datagram[5] != self.key_id {
            return Err(AuthError::UnknownKey(datagram[5]));
        }
        let (signed, tag) = datagram.split_at(split);
        let key = self.packet_key(signed);
        let tag = Tag::try_from(tag).map_err(|_| AuthError::BadTag)?;
        key.aead
            .decrypt_inout_detached(&packet_nonce(signed), signed, (&mut [][..]).into(), &tag)
            .map_err(|_| AuthError::BadTag)?;
        Ok(key)
    }
}

/// The XChaCha20 subkey of one packet and of the replies that echo its sequence and generation
/// timestamp.
#[derive(Clone)]
pub struct PacketKey {
    key_id: u8,
    input: [u8; 16],
    aead: ChaCha20Poly1305,
}

impl std::fmt::Debug for PacketKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PacketKey")
            .field("key_id", &self.key_id)
            .finish_non_exhaustive()
    }
}

impl PacketKey {
    /// Seals the unsealed reply in `buf[..len]`, exactly as [`SessionCipher::seal`] would. The
    /// reply must echo the sequence and generation timestamp of the packet this key opened
    /// ([`EncodeError::NotAReply`] otherwise).
    pub fn seal_reply(&self, buf: &mut [u8], len: usize) -> Result<usize, EncodeError> {
        prepare_seal(buf, len, self.key_id)?;
        if subkey_input(buf) != self.input {
            return Err(EncodeError::NotAReply);
        }
        self.tag(buf, len)
    }

    /// Appends the tag of `buf[..len]` (flags and key id already set); returns the sealed length.
    fn tag(&self, buf: &mut [u8], len: usize) -> Result<usize, EncodeError> {
        let tag = self
            .aead
            .encrypt_inout_detached(&packet_nonce(buf), &buf[..len], (&mut [][..]).into())
            .map_err(|_| EncodeError::TooLarge(len))?;
        buf[len..len + TAG_LEN].copy_from_slice(&tag);
        Ok(len + TAG_LEN)
    }
}

/// The key id of a sealed datagram (one [`crate::wire::Packet::decode`] accepted).
pub fn key_id(datagram: &[u8]) -> Option<u8> {
    (datagram.len() > 5 && datagram[4] & FLAG_AUTH != 0).then(|| datagram[5])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::{Packet, Update};

    fn psk(id: u8, fill: u8) -> Psk {
        Psk {
            id,
            key: Secret([fill; KEY_LEN]),
        }
    }

    fn sealed_update(key: &SessionCipher, seq: u64, payload: &[u8]) -> Vec<u8> {
        let u = Update {
            flags: 0,
            session: 7,
            seq,
            gen_ts: 1,
            acked_seq: 0,
            hold_ns: 0,
            cookie: None,
            payload,
        };
        let mut buf = vec![0u8; u.encoded_len() + TAG_LEN];
        let len = u.encode(&mut buf).unwrap();
        let n = key.seal(&mut buf, len).unwrap();
        buf.truncate(n);
        buf
    }

    #[test]
    fn a_sealed_packet_opens_and_any_change_breaks_it() {
        let key = SessionCipher::new(&psk(3, 9), 7);
        let dg = sealed_update(&key, 1, b"temp=21");
        let Ok(Packet::Update(u)) = Packet::decode(&dg) else {
            panic!("a sealed update decodes");
        };
        assert_eq!(u.payload, b"temp=21");
        assert_eq!(key_id(&dg), Some(3));
        key.open(&dg).unwrap();
        for i in 0..dg.len() {
            for bit in 0..8 {
                let mut bad = dg.clone();
                bad[i] ^= 1 << bit;
                assert!(key.open(&bad).is_err(), "flip of bit {bit} in byte {i}");
            }
        }
    }

    /// The construction is XChaCha20-Poly1305 exactly: the crate's own XChaCha20Poly1305 gives
    /// the same tag under the 24-byte nonce the protocol names.
    #[test]
    fn the_seal_is_xchacha20_poly1305_over_the_header_nonce() {
        use chacha20poly1305::XChaCha20Poly1305;
        let p = psk(4, 0x5a);
        let key = SessionCipher::new(&p, 0xfeed);
        for seq in [1, 2, u64::MAX] {
            let dg = sealed_update(&key, seq, b"payload");
            let (signed, tag) = dg.split_at(dg.len() - TAG_LEN);
            let mut nonce = [0u8; 24];
            nonce[..16].copy_from_slice(&signed[16..32]);
            nonce[16] = signed[3];
            nonce[17..].copy_from_slice(&signed[33..40]);
            let want = XChaCha20Poly1305::new(&derive(&p, 0xfeed).into())
                .encrypt_inout_detached(&nonce.into(), signed, (&mut [][..]).into())
                .unwrap();
            assert_eq!(tag, want.as_slice(), "seq {seq}");
        }
    }

    /// A reply sealed with the update's key is the packet `seal` makes; one that does not echo
    /// the update's sequence and generation time is refused.
    #[test]
    fn replies_share_the_updates_key() {
        let key = SessionCipher::new(&psk(1, 9), 7);
        let dg = sealed_update(&key, 5, b"x");
        let reply_key = key.open(&dg).unwrap();
        let ack = |seq: u64| crate::wire::Ack {
            flags: 0,
            session: 7,
            seq,
            gen_ts: 1,
            rx_ts: 99,
            hold_ns: 0,
            feedback: &[],
        };
        let mut plain = vec![0u8; 128];
        let len = ack(5).encode(&mut plain).unwrap();
        let (mut a, mut b) = (plain.clone(), plain.clone());
        let n = reply_key.seal_reply(&mut a, len).unwrap();
        assert_eq!(key.seal(&mut b, len), Ok(n));
        assert_eq!(a[..n], b[..n]);
        assert!(key.open(&a[..n]).is_ok());
        let len = ack(6).encode(&mut plain).unwrap();
        assert_eq!(
            reply_key.seal_reply(&mut plain, len),
            Err(EncodeError::NotAReply)
        );
    }

    #[test]
    fn keys_are_per_session_and_per_psk() {
        let a = SessionCipher::new(&psk(1, 9), 7);
        let dg = sealed_update(&a, 1, b"x");
        assert_eq!(
            SessionCipher::new(&psk(1, 9), 8).open(&dg).err(),
            Some(AuthError::BadTag)
        );
        assert_eq!(
            SessionCipher::new(&psk(1, 8), 7).open(&dg).err(),
            Some(AuthError::BadTag)
        );
        assert_eq!(
            SessionCipher::new(&psk(2, 9), 7).open(&dg).err(),
            Some(AuthError::UnknownKey(1))
        );
        assert_ne!(derive(&psk(1, 9), 7), derive(&psk(1, 9), 8));
    }

    #[test]
    fn key_files_parse_and_bad_ones_say_which_line() {
        let k = "0123456789abcdef".repeat(4);
        let ring = Keyring::parse(&format!("# keys\n\n1 {k}\n 7 {}\n", k.to_uppercase())).unwrap();
        assert_eq!(ring.first().id, 1);
        assert_eq!(ring.get(7).unwrap().key.0[0], 0x01);
        assert_eq!(Keyring::line(ring.first()), format!("1 {k}"));
        assert_eq!(
            Keyring::parse(&format!("1 {k}\n256 {k}")),
            Err(KeyFileError::Syntax { line: 2 })
        );
        assert_eq!(
            Keyring::parse(&format!("1 {}", &k[1..])),
            Err(KeyFileError::Syntax { line: 1 })
        );
        assert_eq!(
            Keyring::parse(&format!("1 {k}\n1 {k}")),
            Err(KeyFileError::DuplicateId { line: 2, id: 1 })
        );
        assert_eq!(Keyring::parse("# nothing\n"), Err(KeyFileError::Empty));
        assert_eq!(format!("{:?}", ring.first().key), "Secret(..)");
    }
}
