#!/usr/bin/env python3
"""Generate testdata/auth_vectors.json: test vectors for ACP v1 authentication.

Covers docs/PROTOCOL.md, "Authentication": the per-session key (HKDF-SHA256) and sealed packets
(XChaCha20-Poly1305 over an empty plaintext, the packet as associated data, the nonce taken from
the header). Everything is computed here from the text of PROTOCOL.md, independently of the Rust
crates: HKDF uses hashlib/hmac, and ChaCha20, HChaCha20 and Poly1305 are written below from
RFC 8439 and draft-irtf-cfrg-xchacha-03. Before generating anything the script checks those
primitives against the published test vectors (RFC 8439 sections 2.3.2, 2.5.2 and 2.8.2,
draft-irtf-cfrg-xchacha-03 sections 2.2.1 and A.3.1, RFC 5869 A.1). Python 3 standard library
only. Not constant-time: it is for test vectors, not for protecting anything.

Checked by crates/acp-core/tests/auth_vectors.rs.

Usage (from anywhere):  python3 testdata/gen_auth_vectors.py
Writes auth_vectors.json next to this script. The output is deterministic; re-running it must not
change the committed file (`git diff --exit-code testdata/`).
"""

import hashlib
import hmac
import json
import os
import re
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "auth_vectors.json")
PROTOCOL_MD = os.path.join(HERE, "..", "docs", "PROTOCOL.md")

MASK32 = 0xFFFFFFFF


# ---- ChaCha20 (RFC 8439, section 2.1-2.4) ------------------------------------------------------
def _rotl32(v, n):
    return ((v << n) & MASK32) | (v >> (32 - n))


def _quarter_round(s, a, b, c, d):
    s[a] = (s[a] + s[b]) & MASK32
    s[d] = _rotl32(s[d] ^ s[a], 16)
    s[c] = (s[c] + s[d]) & MASK32
    s[b] = _rotl32(s[b] ^ s[c], 12)
    s[a] = (s[a] + s[b]) & MASK32
    s[d] = _rotl32(s[d] ^ s[a], 8)
    s[c] = (s[c] + s[d]) & MASK32
    s[b] = _rotl32(s[b] ^ s[c], 7)


def _rounds(state):
    """The 20 ChaCha rounds (10 column + diagonal double rounds) on a copy of `state`."""
    s = list(state)
    for _ in range(10):
        _quarter_round(s, 0, 4, 8, 12)
        _quarter_round(s, 1, 5, 9, 13)
        _quarter_round(s, 2, 6, 10, 14)
        _quarter_round(s, 3, 7, 11, 15)
        _quarter_round(s, 0, 5, 10, 15)
        _quarter_round(s, 1, 6, 11, 12)
        _quarter_round(s, 2, 7, 8, 13)
        _quarter_round(s, 3, 4, 9, 14)
    return s


SIGMA = struct.unpack("<4I", b"expand 32-byte k")


def chacha20_block(key, counter, nonce):
    """One 64-byte keystream block: 32-byte key, 32-bit block counter, 12-byte nonce."""
    assert len(key) == 32 and len(nonce) == 12 and 0 <= counter <= MASK32
    state = list(SIGMA) + list(struct.unpack("<8I", key)) + [counter] + \
        list(struct.unpack("<3I", nonce))
    mixed = _rounds(state)
    return struct.pack("<16I", *((m + s) & MASK32 for m, s in zip(mixed, state)))


def chacha20_xor(key, counter, nonce, data):
    """ChaCha20 encryption (section 2.4): XOR with the keystream starting at block `counter`."""
    out = bytearray()
    for i in range(0, len(data), 64):
        block = chacha20_block(key, counter + i // 64, nonce)
        out += bytes(x ^ y for x, y in zip(data[i:i + 64], block))
    return bytes(out)


# ---- HChaCha20 (draft-irtf-cfrg-xchacha-03, section 2.2) --------------------------------------
def hchacha20(key, nonce16):
    """Subkey from a 32-byte key and a 16-byte nonce: the ChaCha state after 20 rounds, without
    the final addition, words 0..3 and 12..15."""
    assert len(key) == 32 and len(nonce16) == 16
    state = list(SIGMA) + list(struct.unpack("<8I", key)) + list(struct.unpack("<4I", nonce16))
    s = _rounds(state)
    return struct.pack("<8I", *(s[0:4] + s[12:16]))


# ---- Poly1305 (RFC 8439, section 2.5) ----------------------------------------------------------
P1305 = (1 << 130) - 5


def poly1305(key, msg):
    assert len(key) == 32
    r = int.from_bytes(key[:16], "little") & 0x0FFFFFFC0FFFFFFC0FFFFFFC0FFFFFFF
    s = int.from_bytes(key[16:], "little")
    acc = 0
    for i in range(0, len(msg), 16):
        n = int.from_bytes(msg[i:i + 16] + b"\x01", "little")
        acc = (acc + n) * r % P1305
    return ((acc + s) & ((1 << 128) - 1)).to_bytes(16, "little")


# ---- AEAD_CHACHA20_POLY1305 (RFC 8439, section 2.8) and XChaCha20-Poly1305 ---------------------
def _pad16(b):
    return b"\x00" * (-len(b) % 16)


def chacha20_poly1305_seal(key, nonce12, plaintext, aad):
    """Returns (ciphertext, tag)."""
    otk = chacha20_block(key, 0, nonce12)[:32]  # section 2.6: Poly1305 one-time key
    ct = chacha20_xor(key, 1, nonce12, plaintext)
    mac_data = aad + _pad16(aad) + ct + _pad16(ct) + struct.pack("<QQ", len(aad), len(ct))
    return ct, poly1305(otk, mac_data)


def xchacha20_poly1305_seal(key, nonce24, plaintext, aad):
    """draft-irtf-cfrg-xchacha-03 section 2.3: HChaCha20 subkey from the first 16 nonce bytes,
    then ChaCha20-Poly1305 with nonce 0x00000000 || the last 8 nonce bytes."""
    assert len(nonce24) == 24
    subkey = hchacha20(key, nonce24[:16])
    return chacha20_poly1305_seal(subkey, b"\x00" * 4 + nonce24[16:], plaintext, aad)


# ---- HKDF-SHA256 (RFC 5869) --------------------------------------------------------------------
def hkdf_sha256(salt, ikm, info, length):
    prk = hmac.new(salt, ikm, hashlib.sha256).digest()
    okm, t, i = b"", b"", 1
    while len(okm) < length:
        t = hmac.new(prk, t + info + bytes([i]), hashlib.sha256).digest()
        okm += t
        i += 1
    return okm[:length]


# ---- Self-test against the published vectors; nothing is generated unless all pass ------------
def unspace(h):
    return bytes.fromhex("".join(h.split()))


def self_test():
    key_00_1f = bytes(range(32))
    # RFC 8439 section 2.3.2: block function.
    assert chacha20_block(key_00_1f, 1, unspace("000000090000004a00000000")) == unspace("""
        10 f1 e7 e4 d1 3b 59 15 50 0f dd 1f a3 20 71 c4 c7 d1 f4 c7 33 c0 68 03 04 22 aa 9a
        c3 d4 6c 4e d2 82 64 46 07 9f aa 09 14 c2 d7 05 d9 8b 02 a2 b5 12 9c d1 de 16 4e b9
        cb d0 83 e8 a2 50 3c 4e"""), "RFC 8439 2.3.2"
    # RFC 8439 section 2.5.2: Poly1305.
    assert poly1305(unspace("""
        85 d6 be 78 57 55 6d 33 7f 44 52 fe 42 d5 06 a8 01 03 80 8a fb 0d b2 fd 4a bf f6 af
        41 49 f5 1b"""), b"Cryptographic Forum Research Group") == unspace(
        "a8 06 1d c1 30 51 36 c6 c2 2b 8b af 0c 01 27 a9"), "RFC 8439 2.5.2"
    # RFC 8439 section 2.8.2: AEAD.
    sunscreen = (b"Ladies and Gentlemen of the class of '99: If I could offer you only one tip "
                 b"for the future, sunscreen would be it.")
    aad = unspace("50 51 52 53 c0 c1 c2 c3 c4 c5 c6 c7")
    key_80_9f = bytes(range(0x80, 0xA0))
    ct, tag = chacha20_poly1305_seal(key_80_9f, unspace("07 00 00 00 40 41 42 43 44 45 46 47"),
                                     sunscreen, aad)
    assert ct == unspace("""
        d3 1a 8d 34 64 8e 60 db 7b 86 af bc 53 ef 7e c2 a4 ad ed 51 29 6e 08 fe a9 e2 b5 a7
        36 ee 62 d6 3d be a4 5e 8c a9 67 12 82 fa fb 69 da 92 72 8b 1a 71 de 0a 9e 06 0b 29
        05 d6 a5 b6 7e cd 3b 36 92 dd bd 7f 2d 77 8b 8c 98 03 ae e3 28 09 1b 58 fa b3 24 e4
        fa d6 75 94 55 85 80 8b 48 31 d7 bc 3f f4 de f0 8e 4b 7a 9d e5 76 d2 65 86 ce c6 4b
        61 16"""), "RFC 8439 2.8.2 ciphertext"
    assert tag == unspace("1a e1 0b 59 4f 09 e2 6a 7e 90 2e cb d0 60 06 91"), "RFC 8439 2.8.2 tag"
    # draft-irtf-cfrg-xchacha-03 section 2.2.1: HChaCha20.
    assert hchacha20(key_00_1f, unspace("000000090000004a0000000031415927")) == unspace(
        "82413b42 27b27bfe d30e4250 8a877d73 a0f9e4d5 8a74a853 c12ec413 26d3ecdc"), \
        "xchacha-03 2.2.1"
    # draft-irtf-cfrg-xchacha-03 section A.3.1: AEAD_XChaCha20_Poly1305.
    ct, tag = xchacha20_poly1305_seal(key_80_9f, bytes(range(0x40, 0x58)), sunscreen, aad)
    assert ct == unspace("""
        bd6d179d3e83d43b9576579493c0e939572a1700252bfaccbed2902c21396cbb
        731c7f1b0b4aa6440bf3a82f4eda7e39ae64c6708c54c216cb96b72e1213b452
        2f8c9ba40db5d945b11b69b982c1bb9e3f3fac2bc369488f76b2383565d3fff9
        21f9664c97637da9768812f615c68b13b52e"""), "xchacha-03 A.3.1 ciphertext"
    assert tag == unspace("c0875924c1c7987947deafd8780acf49"), "xchacha-03 A.3.1 tag"
    # RFC 5869 A.1: HKDF-SHA256, test case 1.
    assert hkdf_sha256(bytes(range(13)), b"\x0b" * 22, bytes(range(0xF0, 0xFA)), 42) == unspace(
        "3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865"), \
        "RFC 5869 A.1"


self_test()

# ---- ACP authentication, from docs/PROTOCOL.md "Authentication" --------------------------------
KDF_SALT = b"ACP v1 session key"
assert len(KDF_SALT) == 18
HEADER_LEN = 44
TAG_LEN = 16
FLAG_AUTH = 0x80
TYPE_UPDATE, TYPE_ACK, TYPE_COOKIE = 0x01, 0x02, 0x03
FLAG_PROBE = FLAG_STALE = 0x01
FLAG_COOKIE = 0x02
FIXED = struct.Struct(">2sBBBBHQQQQI")  # "Common fixed part (44 bytes)"
assert FIXED.size == HEADER_LEN
SEC = 1_000_000_000


def session_key(psk_id, psk, session):
    """HKDF-SHA256(salt "ACP v1 session key", IKM psk, info key id || session id BE, L 32)."""
    return hkdf_sha256(KDF_SALT, psk, bytes([psk_id]) + session.to_bytes(8, "big"), 32)


def nonce_of(packet):
    """Bytes 16..32 (sequence, generation timestamp), the type byte, then bytes 33..40. An update
    and its replies share the first 16 bytes, hence the HChaCha20 subkey."""
    n = packet[16:32] + packet[3:4] + packet[33:40]
    assert len(n) == 24
    return n


def seal(packet, psk_id, key):
    """Sets AUTH and the key id, appends the tag over the packet as associated data."""
    p = bytearray(packet)
    p[4] |= FLAG_AUTH
    p[5] = psk_id
    p = bytes(p)
    ct, tag = xchacha20_poly1305_seal(key, nonce_of(p), b"", p)
    assert ct == b""
    return p + tag


def open_reason(datagram, psk_id, psk, session):
    """None if the seal verifies under (psk_id, psk, session), else the PROTOCOL.md counter name
    of the first check that fails ("unknown_key": byte 5 names a key not held; "bad_tag")."""
    assert len(datagram) >= HEADER_LEN + TAG_LEN and datagram[4] & FLAG_AUTH
    if datagram[5] != psk_id:
        return "unknown_key"
    signed, tag = datagram[:-TAG_LEN], datagram[-TAG_LEN:]
    _, want = xchacha20_poly1305_seal(session_key(psk_id, psk, session), nonce_of(signed), b"",
                                      signed)
    return None if hmac.compare_digest(want, tag) else "bad_tag"


def packet(ptype, *, flags=0, session, seq, gen_ts, word4, hold, body=b""):
    """An unsealed packet, byte for byte from the "Common fixed part" layout."""
    return FIXED.pack(b"AC", 1, ptype, flags, 0, len(body), session, seq, gen_ts, word4,
                      hold) + body


def tlv(kind, value):
    return bytes([kind, len(value)]) + value


# Pre-shared keys: fixed, random-looking bytes (SHA-256 of a label), so the vectors are stable.
PSK_A = hashlib.sha256(b"ACP auth test vector: pre-shared key A").digest()
PSK_B = hashlib.sha256(b"ACP auth test vector: pre-shared key B").digest()
SESSION = 0x0123456789ABCDEF  # the session of the PROTOCOL.md worked example
COOKIE = bytes.fromhex("c00c1e0123456789abcdef42")


def key_fields(psk_id, psk, session):
    return {"psk_id": psk_id, "psk_hex": psk.hex(), "session": str(session)}


# ---- Session-key derivations --------------------------------------------------------------------
DERIVATIONS = []


def derivation(name, psk_id, psk, session, note):
    DERIVATIONS.append({
        "name": name,
        "note": note,
        "key_file_line": f"{psk_id} {psk.hex()}",
        **key_fields(psk_id, psk, session),
        "session_key_hex": session_key(psk_id, psk, session).hex(),
    })


derivation("key_a_id_1_worked_session", 1, PSK_A, SESSION,
           "key A with id 1, session 0x0123456789abcdef (the worked example's)")
derivation("key_a_id_1_next_session", 1, PSK_A, SESSION ^ 1,
           "as key_a_id_1_worked_session but session 0x0123456789abcdee: one bit of the session "
           "id changes the whole key")
derivation("key_a_id_2_worked_session", 2, PSK_A, SESSION,
           "the same 32 key bytes under id 2: the key id is part of the info, so another key")
derivation("key_b_id_255_max_session", 255, PSK_B, 2**64 - 1,
           "key B with id 255, session 2^64 - 1")
derivation("key_b_id_0_session_0", 0, PSK_B, 0, "key B with id 0, session 0")

keys = [bytes.fromhex(d["session_key_hex"]) for d in DERIVATIONS]
assert len(set(keys)) == len(keys), "every derivation must give a different key"

# ---- Sealed packets -----------------------------------------------------------------------------
SEALED = []


def sealed(name, psk_id, psk, session, unsealed, note):
    assert int.from_bytes(unsealed[8:16], "big") == session
    key = session_key(psk_id, psk, session)
    dg = seal(unsealed, psk_id, key)
    assert len(dg) == len(unsealed) + TAG_LEN
    assert open_reason(dg, psk_id, psk, session) is None
    SEALED.append({
        "name": name,
        "note": note,
        **key_fields(psk_id, psk, session),
        "session_key_hex": key.hex(),
        "nonce_hex": nonce_of(dg).hex(),
        "unsealed_hex": unsealed.hex(),
        "sealed_hex": dg.hex(),
        "tag_hex": dg[-TAG_LEN:].hex(),
    })
    return dg


update_hi = sealed(
    "update_worked_example", 1, PSK_A, SESSION,
    packet(TYPE_UPDATE, session=SESSION, seq=1, gen_ts=1 * SEC, word4=0, hold=0, body=b"hi"),
    "the PROTOCOL.md worked-example UPDATE (seq 1, generated at 1 s, payload 'hi') sealed with "
    "key A, id 1")
cookie_reply = sealed(
    "cookie_for_worked_example", 1, PSK_A, SESSION,
    packet(TYPE_COOKIE, session=SESSION, seq=1, gen_ts=1 * SEC,
           word4=int.from_bytes(COOKIE[:8], "big"), hold=int.from_bytes(COOKIE[8:], "big")),
    "the COOKIE a sealed monitor answers update_worked_example with: the cookie in bytes 32..44, "
    "no body; 60 bytes sealed")
update_cookie = sealed(
    "update_probe_with_cookie", 1, PSK_A, SESSION,
    packet(TYPE_UPDATE, flags=FLAG_PROBE | FLAG_COOKIE, session=SESSION, seq=2,
           gen_ts=1 * SEC + 20_000_000, word4=0, hold=0, body=COOKIE + b"hi"),
    "the next probe, echoing the cookie of cookie_for_worked_example (flags PROBE|COOKIE, body = "
    "cookie + 'hi')")
ack_fb = sealed(
    "ack_with_feedback", 1, PSK_A, SESSION,
    packet(TYPE_ACK, session=SESSION, seq=2, gen_ts=1 * SEC + 20_000_000, word4=5 * SEC,
           hold=0, body=tlv(0x01, b"\x00\x0c")),
    "the ACK of update_probe_with_cookie, received at 5 s on the monitor's clock, with one "
    "feedback TLV (kind 1, value 00 0c)")
sealed(
    "ack_stale_no_feedback", 1, PSK_A, SESSION,
    packet(TYPE_ACK, flags=FLAG_STALE, session=SESSION, seq=1, gen_ts=1 * SEC,
           word4=5 * SEC + 1, hold=0),
    "a STALE ACK one nanosecond later than ack_with_feedback (every sealed ACK gets its own rx "
    "time, so nonces never repeat)")
sealed(
    "update_key_b_id_255", 255, PSK_B, 2**64 - 1,
    packet(TYPE_UPDATE, session=2**64 - 1, seq=7, gen_ts=0x1112131415161718, word4=6,
           hold=250_000, body=b"temp=21"),
    "another key (B, id 255) and session (2^64 - 1); acked 6, hold 250 us, payload 'temp=21'")
sealed(
    "update_cookie_empty_payload", 0, PSK_B, 0,
    packet(TYPE_UPDATE, flags=FLAG_COOKIE, session=0, seq=1, gen_ts=SEC, word4=0, hold=0,
           body=COOKIE),
    "key B with id 0 (byte 5 = 0 with AUTH set), session 0: an UPDATE whose body is only a "
    "cookie")

nonces = [(s["session_key_hex"], s["nonce_hex"]) for s in SEALED]
assert len(set(nonces)) == len(nonces), "a nonce must never repeat under one key"

# ---- Datagrams that must not open ---------------------------------------------------------------
MUST_FAIL = []


def must_fail(name, dg, psk_id, psk, session, error, note):
    # Well framed as a sealed packet (AUTH set, length = size - 44 - 16): only the seal is wrong.
    assert dg[4] & FLAG_AUTH and int.from_bytes(dg[6:8], "big") == len(dg) - HEADER_LEN - TAG_LEN
    got = open_reason(dg, psk_id, psk, session)
    assert got == error, (name, got, error)
    MUST_FAIL.append({"name": name, "note": note, **key_fields(psk_id, psk, session),
                      "hex": dg.hex(), "error": error})


def flipped(dg, at, bit):
    b = bytearray(dg)
    b[at] ^= 1 << bit
    return bytes(b)


must_fail("tag_bit_flipped", flipped(update_hi, len(update_hi) - 1, 0), 1, PSK_A, SESSION,
          "bad_tag", "update_worked_example with bit 0 of the tag's last byte flipped")
must_fail("tag_first_bit_flipped", flipped(update_hi, len(update_hi) - TAG_LEN, 7), 1, PSK_A,
          SESSION, "bad_tag", "update_worked_example with bit 7 of the tag's first byte flipped")
must_fail("header_gen_ts_bit_flipped", flipped(update_hi, 31, 0), 1, PSK_A, SESSION, "bad_tag",
          "update_worked_example with bit 0 of byte 31 (generation timestamp) flipped: in the "
          "nonce and the associated data")
must_fail("header_seq_bit_flipped", flipped(update_hi, 23, 1), 1, PSK_A, SESSION, "bad_tag",
          "update_worked_example with sequence 1 changed to 3 (byte 23): in the nonce and the "
          "associated data")
must_fail("header_session_bit_flipped", flipped(update_hi, 15, 0), 1, PSK_A, SESSION ^ 1,
          "bad_tag", "update_worked_example with bit 0 of the session id flipped, opened under "
          "the session the header now names (as a monitor would)")
must_fail("body_bit_flipped", flipped(update_hi, HEADER_LEN, 0), 1, PSK_A, SESSION, "bad_tag",
          "update_worked_example with payload 'hi' changed to 'ii'")
must_fail("cookie_body_bit_flipped", flipped(update_cookie, HEADER_LEN + 11, 5), 1, PSK_A,
          SESSION, "bad_tag", "update_probe_with_cookie with a bit of the echoed cookie flipped")
must_fail("ack_rx_time_bit_flipped", flipped(ack_fb, 39, 0), 1, PSK_A, SESSION, "bad_tag",
          "ack_with_feedback with the last bit of the rx time flipped (in the nonce)")
must_fail("ack_feedback_bit_flipped", flipped(ack_fb, HEADER_LEN + 3, 0), 1, PSK_A, SESSION,
          "bad_tag", "ack_with_feedback with the feedback value 00 0c changed to 00 0d")
must_fail("cookie_bit_flipped", flipped(cookie_reply, 43, 6), 1, PSK_A, SESSION, "bad_tag",
          "cookie_for_worked_example with a bit of the cookie (byte 43) flipped")
rewritten = bytearray(update_hi)
rewritten[5] = 2
must_fail("key_id_rewritten", bytes(rewritten), 1, PSK_A, SESSION, "unknown_key",
          "update_worked_example with byte 5 rewritten from key id 1 to 2, opened by a holder of "
          "key 1 only")
must_fail("key_id_rewritten_key_held", bytes(rewritten), 2, PSK_A, SESSION, "bad_tag",
          "the same datagram opened by a holder of id 2 with the same 32 key bytes: the id is "
          "part of the derivation, so the session key differs")
must_fail("wrong_psk_same_id", update_hi, 1, PSK_B, SESSION, "bad_tag",
          "update_worked_example opened with key B under id 1")
unsealed_hi = bytes.fromhex(SEALED[0]["unsealed_hex"])
must_fail("sealed_under_other_session", seal(unsealed_hi, 1, session_key(1, PSK_A, SESSION ^ 1)),
          1, PSK_A, SESSION, "bad_tag",
          "the worked-example UPDATE (session 0x0123456789abcdef) sealed with the key of session "
          "0x0123456789abcdee, opened under the session in its header")
must_fail("tag_from_another_packet", update_hi[:-TAG_LEN] + ack_fb[-TAG_LEN:], 1, PSK_A, SESSION,
          "bad_tag", "update_worked_example carrying the tag of ack_with_feedback")

# Every positive case opens and every name is unique.
names = [c["name"] for c in DERIVATIONS + SEALED + MUST_FAIL]
assert len(set(names)) == len(names), "duplicate case name"


# ---- The worked example in PROTOCOL.md ("Authentication") must quote these vectors ------------
def check_protocol_md():
    try:
        with open(PROTOCOL_MD, encoding="utf-8") as f:
            text = f.read()
    except OSError:
        return
    marker = "testdata/auth_vectors.json`."
    if marker not in text:
        return
    section = text.split(marker, 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```\n(.*?)```", section, re.S)
    if not blocks:
        return
    d, s = DERIVATIONS[0], SEALED[0]
    assert blocks[0].strip() == d["key_file_line"], "PROTOCOL.md key file line"
    assert d["session_key_hex"] in "".join(section.split()), "PROTOCOL.md session key"
    assert unspace(blocks[-1]).hex() == s["sealed_hex"], "PROTOCOL.md sealed UPDATE"


check_protocol_md()

doc = {
    "format": (
        "ACP v1 authentication test vectors (docs/PROTOCOL.md, 'Authentication'), generated by "
        "testdata/gen_auth_vectors.py from the text of PROTOCOL.md with a pure-Python HKDF-SHA256 "
        "and XChaCha20-Poly1305 (checked against RFC 8439 and draft-irtf-cfrg-xchacha-03); do not "
        "edit by hand. Every case has 'name', 'note', and the key it uses: 'psk_id' (number, "
        "0-255), 'psk_hex' (the 32-byte pre-shared key) and 'session' (u64 as a JSON STRING of "
        "decimal digits). All hex is lowercase. 'derivations': 'key_file_line' (the key as a key "
        "file holds it) and 'session_key_hex' (HKDF-SHA256, salt 'ACP v1 session key', IKM the "
        "pre-shared key, info key id || session id big-endian, 32 bytes). 'sealed': "
        "'unsealed_hex' (a valid packet with flag AUTH clear and byte 5 zero), 'sealed_hex' "
        "(that packet sealed: AUTH set, key id in byte 5, the 16-byte tag appended; sealing "
        "'unsealed_hex' must give exactly these bytes and opening them must succeed), and for "
        "debugging 'session_key_hex', 'nonce_hex' (the 24-byte nonce: bytes 16..32, the type "
        "byte, bytes 33..40) and 'tag_hex'. 'must_fail': 'hex', a datagram that "
        "decodes as a sealed packet but must not open under the given key and session, and "
        "'error', the first failing check as PROTOCOL.md counts it: 'unknown_key' (byte 5 is "
        "not the id of the key held) or 'bad_tag'."
    ),
    "derivations": DERIVATIONS,
    "sealed": SEALED,
    "must_fail": MUST_FAIL,
}

with open(OUT, "w", encoding="utf-8", newline="\n") as f:
    json.dump(doc, f, indent=2)
    f.write("\n")

print(f"wrote {len(DERIVATIONS)} derivations, {len(SEALED)} sealed packets and {len(MUST_FAIL)} "
      f"must-fail datagrams to {os.path.relpath(OUT)}", file=sys.stderr)
